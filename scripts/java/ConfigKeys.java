import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;

/**
 * Kafka's config definitions, as metashell needs them for redaction and for the image's supported
 * keys.  Run with the classpath of one Kafka release (scripts/gen_config_keys.py does).
 *
 * <pre>
 *   ConfigKeys defs            one line per key: RESOURCE_TYPE TAB KEY TAB TYPE
 *   ConfigKeys check KEY...    one line per key: KEY TAB b TAB t TAB g TAB c, each 1 when Kafka
 *                              treats the value as sensitive for BROKER, TOPIC, GROUP, CLIENT_METRICS
 * </pre>
 *
 * "Sensitive" is Kafka's own rule, from the classes that describe configs to clients:
 * KafkaConfig.maybeSensitive(type), true when the type cannot be determined or is PASSWORD, with the
 * type from KafkaConfig.configType (brokers: listener and mechanism prefixes resolved),
 * LogConfig.configType (topics), GroupConfig.configType and ClientMetricsConfigs.configType.
 * Classes that an older release lacks are looked up by reflection and reported as absent.
 */
public class ConfigKeys {
    static final String[] TYPES = {"BROKER", "TOPIC", "GROUP", "CLIENT_METRICS"};
    static final String[] CLASSES = {
        "kafka.server.KafkaConfig",
        "org.apache.kafka.storage.internals.log.LogConfig",
        "org.apache.kafka.coordinator.group.GroupConfig",
        "org.apache.kafka.server.metrics.ClientMetricsConfigs",
    };

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("check")) {
            for (int i = 1; i < args.length; i++) {
                StringBuilder line = new StringBuilder(args[i]);
                for (int t = 0; t < TYPES.length; t++) {
                    Boolean s = sensitive(t, args[i]);
                    line.append('\t').append(s == null ? "-" : (s ? "1" : "0"));
                }
                System.out.println(line);
            }
            return;
        }
        for (int t = 0; t < TYPES.length; t++) {
            ConfigDef def = configDef(t);
            if (def == null) continue;
            Map<String, ConfigDef.ConfigKey> keys = new TreeMap<>(def.configKeys());
            for (Map.Entry<String, ConfigDef.ConfigKey> e : keys.entrySet()) {
                System.out.println(TYPES[t] + "\t" + e.getKey() + "\t" + e.getValue().type);
            }
        }
    }

    static Class<?> cls(int t) {
        try {
            return Class.forName(CLASSES[t]);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    static ConfigDef configDef(int t) throws Exception {
        Class<?> c = cls(t);
        if (c == null) return null;
        for (String name : new String[] {"configDef", "configDefCopy"}) {
            try {
                return (ConfigDef) c.getMethod(name).invoke(null);
            } catch (NoSuchMethodException e) {
                // try the next name
            }
        }
        try {
            return (ConfigDef) c.getField("CONFIG_DEF").get(null);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    /** Kafka's sensitivity of KEY for resource type t; null when this release has no such class. */
    static Boolean sensitive(int t, String key) throws Exception {
        Class<?> c = cls(t);
        if (c == null) return null;
        Object type;
        try {
            type = c.getMethod("configType", String.class).invoke(null, key);
        } catch (NoSuchMethodException e) {
            return null;
        }
        if (type instanceof Optional<?> o) type = o.orElse(null);
        if (type instanceof scala.Option<?> o) type = o.isEmpty() ? null : o.get();
        return type == null || type == ConfigDef.Type.PASSWORD;
    }
}

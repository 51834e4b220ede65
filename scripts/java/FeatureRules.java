import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.FeatureVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Kafka's rules for finalizing a feature level, as metashell's upgrade-check needs them: each
 * production feature's levels, whether each is production-ready, and what each level depends on
 * (FeatureVersion.dependencies, checked by Feature.validateVersion when the controller finalizes
 * it).  Run with the classpath of one Kafka release (scripts/gen_feature_rules.py does).
 *
 * <pre>
 *   minimum  TAB LEVEL                       MetadataVersion.MINIMUM_VERSION (what level >= 1 needs)
 *   level    TAB FEATURE TAB LEVEL TAB PRODUCTION(0|1) TAB DEP=LEVEL,DEP=LEVEL...
 * </pre>
 */
public class FeatureRules {
    public static void main(String[] args) {
        System.out.println("minimum\t" + MetadataVersion.MINIMUM_VERSION.featureLevel());
        for (Feature feature : Feature.PRODUCTION_FEATURES) {
            for (FeatureVersion v : feature.featureVersions()) {
                StringBuilder deps = new StringBuilder();
                for (Map.Entry<String, Short> d : new TreeMap<>(v.dependencies()).entrySet()) {
                    deps.append(deps.length() > 0 ? "," : "").append(d.getKey()).append('=').append(d.getValue());
                }
                System.out.println("level\t" + feature.featureName() + "\t" + v.featureLevel() + "\t"
                    + (feature.isProductionReady(v.featureLevel()) ? 1 : 0) + "\t" + deps);
            }
        }
    }
}

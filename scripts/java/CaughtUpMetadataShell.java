/*
 * Kafka's metadata shell in one-shot mode, without its two timing bugs: the oracle for files on which
 * Kafka's own shell hangs.
 *
 * Built and run by scripts/oracle.py (java_shell_caught_up) against the Kafka jars; it is not part
 * of metashell.  It is MetadataShell.run's non-interactive path with the same classes (MetadataLoader,
 * SnapshotFileReader, MetadataShellPublisher, MetadataShellState, Commands, the fault handler and
 * DefaultSupportedConfigChecker), with two changes:
 *
 * 1. The wait.  MetadataShell.waitUntilCaughtUp() spins until loader.lastAppliedOffset() > 0, which
 *    never happens when the loader publishes nothing (a file without metadata.version, a lone segment
 *    whose every delta fails), so Kafka's shell hangs forever.  Here the wait is: the file reader has
 *    handed every batch to the loader (its private caughtUpFuture) and the loader's event queue has
 *    run dry (one more event, installing a publisher that does nothing, has completed; installing an
 *    empty list would not do: it returns at once without queueing anything).  That also removes the
 *    shell's race where the command runs before the publisher has the image.
 * 2. The high watermark.  SnapshotFileReader only learns it (the last batch's last offset) when it
 *    reads the last batch, and MetadataLoader publishes nothing while it does not know it.  When the
 *    loader applies the last data batch before the reader has read a trailing control batch (a
 *    snapshot's footer, a closing LeaderChange), the loader stays "catching up" for good and Kafka's
 *    shell hangs -- at random, on small files.  Here the loader is told the file's high watermark
 *    from the start (read with the same FileRecords), which is the outcome when the reader wins.
 *
 * stdout is one line "lastAppliedOffset=<n>", then exactly what the command prints: n tells the caller
 * whether Kafka's own shell would have printed anything at all (it would iff n > 0).  Exit status: 0,
 * or 1 when the command threw (as Kafka's shell: what it printed so far stays), or 3 when loading failed.
 *
 * With --each SEP, the words after it are several commands separated by SEP, run in turn on the one
 * loaded state (a JVM start and a load cost about two seconds; the oracle asks seven commands of a
 * small file).  After each command's output comes "\n" SEP " " <its status> "\n"; the exit status is 0.
 *
 * Usage: java -cp <kafka jars>:<dir of this class> CaughtUpMetadataShell FILE COMMAND [ARGS...]
 *        java -cp ... CaughtUpMetadataShell FILE --each SEP COMMAND [ARGS...] [SEP COMMAND [ARGS...]]...
 */

import org.apache.kafka.common.record.internal.FileLogInputStream;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.loader.LoaderManifest;
import org.apache.kafka.image.loader.MetadataLoader;
import org.apache.kafka.image.publisher.MetadataPublisher;
import org.apache.kafka.metadata.util.SnapshotFileReader;
import org.apache.kafka.server.config.DefaultSupportedConfigChecker;
import org.apache.kafka.server.fault.LoggingFaultHandler;
import org.apache.kafka.shell.command.Commands;
import org.apache.kafka.shell.state.MetadataShellPublisher;
import org.apache.kafka.shell.state.MetadataShellState;

import java.io.BufferedWriter;
import java.io.File;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

public final class CaughtUpMetadataShell {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: CaughtUpMetadataShell FILE COMMAND [ARGS...]");
            System.exit(2);
        }
        MetadataShellState state = new MetadataShellState();
        OptionalLong highWaterMark = lastOffset(args[0]);
        MetadataLoader loader = new MetadataLoader.Builder()
            .setFaultHandler(new LoggingFaultHandler("shell", () -> { }))
            .setNodeId(-1)
            .setHighWaterMarkAccessor(() -> highWaterMark)
            .setSupportedConfigChecker(new DefaultSupportedConfigChecker())
            .build();
        SnapshotFileReader reader = new SnapshotFileReader(args[0], loader);
        int status = 0;
        try {
            reader.startup();
            loader.installPublishers(List.of(new MetadataShellPublisher(state))).get(15, TimeUnit.MINUTES);
            caughtUpFuture(reader).get(15, TimeUnit.MINUTES);
            loader.installPublishers(List.of(new QueueMarker())).get(15, TimeUnit.MINUTES);
        } catch (Throwable e) {
            System.err.println("Loading failed: " + e);
            e.printStackTrace(System.err);
            System.exit(3);
        }
        // As MetadataShell: a command that throws leaves what it printed so far, and exit status 1.
        try (PrintWriter writer = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8)))) {
            writer.println("lastAppliedOffset=" + loader.lastAppliedOffset());
            List<String> words = Arrays.asList(args).subList(1, args.length);
            if (words.size() >= 2 && words.get(0).equals("--each")) {
                String sep = words.get(1);
                for (List<String> command : split(words.subList(2, words.size()), sep)) {
                    StringWriter out = new StringWriter();
                    PrintWriter commandWriter = new PrintWriter(out);
                    int commandStatus = run(command, commandWriter, state);
                    commandWriter.flush();
                    writer.print(out);
                    writer.print("\n" + sep + " " + commandStatus + "\n");
                }
            } else {
                status = run(words, writer, state);
            }
            writer.flush();
        } finally {
            loader.close();
            reader.close();
        }
        System.exit(status);
    }

    /** One command, as MetadataShell runs it: 0, or 1 when it threw (what it printed so far stays). */
    private static int run(List<String> command, PrintWriter writer, MetadataShellState state) {
        try {
            Commands.Handler handler = new Commands(false).parseCommand(command);
            handler.run(Optional.empty(), writer, state);
            return 0;
        } catch (Throwable e) {
            System.err.println("Unexpected error: " + (e.getMessage() == null ? "" : e.getMessage()));
            e.printStackTrace(System.err);
            return 1;
        }
    }

    /** The commands of an --each list: the words between separators. */
    private static List<List<String>> split(List<String> words, String sep) {
        List<List<String>> commands = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String word : words) {
            if (word.equals(sep)) {
                commands.add(current);
                current = new ArrayList<>();
            } else {
                current.add(word);
            }
        }
        commands.add(current);
        return commands;
    }

    /** Installed last, so that its install event runs after every commit the file reader queued. */
    private static final class QueueMarker implements MetadataPublisher {
        @Override
        public String name() {
            return "CaughtUpMetadataShell.QueueMarker";
        }

        @Override
        public void onMetadataUpdate(MetadataDelta delta, MetadataImage image, LoaderManifest manifest) {
        }
    }

    /** What SnapshotFileReader sets as the high watermark once it has read the last batch. */
    private static OptionalLong lastOffset(String path) throws Exception {
        OptionalLong last = OptionalLong.empty();
        try (FileRecords records = FileRecords.open(new File(path), false)) {
            for (FileLogInputStream.FileChannelRecordBatch batch : records.batches()) {
                last = OptionalLong.of(batch.lastOffset());
            }
        }
        return last;
    }

    @SuppressWarnings("unchecked")
    private static CompletableFuture<Void> caughtUpFuture(SnapshotFileReader reader) throws Exception {
        Field f = SnapshotFileReader.class.getDeclaredField("caughtUpFuture");
        f.setAccessible(true);
        return (CompletableFuture<Void>) f.get(reader);
    }
}

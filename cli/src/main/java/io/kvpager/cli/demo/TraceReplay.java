package io.kvpager.cli.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.zip.GZIPInputStream;

/**
 * A recorded serving trace replayed by the demo ({@code kvpager demo --trace FILE|azure-conv}): a
 * CSV of schema {@code TIMESTAMP,ContextTokens,GeneratedTokens}, one request a row.
 *
 * <p>How it is replayed: the trace's span is cut into as many consecutive, equal slices of time as
 * there are models, model {@code m} replays slice {@code m}, and each slice is compressed into the
 * run's duration, keeping the order and the relative gaps of its arrivals. Then the trace is
 * rate-scaled to the GPU as a whole: every request is kept with one probability (seeded), the same
 * for every slice, chosen so that the pages the kept requests of all slices hold on average, living
 * one decode step per generated token plus their prefill steps ({@link OfferedLoad}), are the
 * run's {@code --load} of the caches' memory. A recorded service asks far more than one shared GPU serves;
 * thinning keeps its bursts and lulls, only fewer requests in each, and one probability for all
 * keeps the slices' own differences: a busier slice offers its model more than its equal share, a
 * quieter one less, as services of unequal popularity do. Prompt and output lengths are replayed as
 * recorded.
 */
public final class TraceReplay {

    /** The name under which the bundled conversation trace is replayed. */
    public static final String AZURE_CONV = "azure-conv";
    /** The bundled trace: Azure LLM inference trace 2023, conversation service (CC-BY 4.0). */
    static final String AZURE_CONV_RESOURCE = "azure-llm-2023-conv.csv.gz";
    /** The schema's header. */
    static final String HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens";
    /** Bad rows named in the error, at most. */
    private static final int ERRORS_SHOWN = 5;

    private static final DateTimeFormatter TIMESTAMP = new DateTimeFormatterBuilder()
            .appendPattern("yyyy-MM-dd HH:mm:ss")
            .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
            .toFormatter(Locale.ROOT);

    /** One recorded request: arrival in microseconds from the first one, and its token counts. */
    record Row(long atMicros, int contextTokens, int generatedTokens) {
    }

    private final String name;
    private final List<Row> rows;

    private TraceReplay(String name, List<Row> rows) {
        this.name = name;
        this.rows = List.copyOf(rows);
    }

    /**
     * The trace {@code spec} names: {@value #AZURE_CONV} (bundled) or a CSV file, gzipped when its
     * name ends in {@code .gz}.
     *
     * @throws IllegalArgumentException when the file cannot be read or a row is bad (with line numbers)
     */
    public static TraceReplay load(String spec) {
        if (spec.equals(AZURE_CONV)) {
            InputStream in = TraceReplay.class.getResourceAsStream(AZURE_CONV_RESOURCE);
            if (in == null) {
                throw new IllegalStateException("the bundled trace " + AZURE_CONV_RESOURCE + " is missing from the classpath");
            }
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(new GZIPInputStream(in), StandardCharsets.UTF_8))) {
                return parse("azure-conv (Azure LLM inference trace 2023, conversation service)", reader);
            } catch (IOException e) {
                throw new UncheckedIOException("reading the bundled trace", e);
            }
        }
        Path file = Path.of(spec);
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("--trace " + spec + ": no such file (or give " + AZURE_CONV + ")");
        }
        try (InputStream raw = Files.newInputStream(file);
                BufferedReader reader = new BufferedReader(new InputStreamReader(
                        spec.endsWith(".gz") ? new GZIPInputStream(raw) : raw, StandardCharsets.UTF_8))) {
            return parse(file.getFileName().toString(), reader);
        } catch (IOException e) {
            throw new IllegalArgumentException("--trace " + spec + " cannot be read: " + e.getMessage(), e);
        }
    }

    /**
     * Parses a trace: the header line, then one request a row; blank lines are skipped.
     *
     * @throws IllegalArgumentException naming the first bad rows by line number, or an empty trace
     */
    static TraceReplay parse(String name, BufferedReader reader) throws IOException {
        String header = reader.readLine();
        if (header == null || header.isBlank()) {
            throw new IllegalArgumentException("--trace " + name + " is empty: it needs the header " + HEADER + " and at least one row");
        }
        if (!header.strip().replace("\uFEFF", "").equalsIgnoreCase(HEADER)) {
            throw new IllegalArgumentException("--trace " + name + " line 1: expected the header " + HEADER + ", got '" + header.strip() + "'");
        }
        List<String> errors = new ArrayList<>();
        int bad = 0;
        List<long[]> parsed = new ArrayList<>();
        String line;
        int number = 1;
        while ((line = reader.readLine()) != null) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            try {
                parsed.add(row(line));
            } catch (IllegalArgumentException | DateTimeParseException e) {
                bad++;
                if (errors.size() < ERRORS_SHOWN) {
                    errors.add("line " + number + ": " + e.getMessage());
                }
            }
        }
        if (bad > 0) {
            throw new IllegalArgumentException("--trace " + name + " has " + bad + " bad row" + (bad == 1 ? "" : "s") + " ("
                    + String.join("; ", errors) + (bad > errors.size() ? "; ..." : "") + ")");
        }
        if (parsed.isEmpty()) {
            throw new IllegalArgumentException("--trace " + name + " has a header but no request");
        }
        parsed.sort(Comparator.comparingLong(r -> r[0]));
        long first = parsed.getFirst()[0];
        List<Row> rows = parsed.stream().map(r -> new Row(r[0] - first, (int) r[1], (int) r[2])).toList();
        return new TraceReplay(name, rows);
    }

    private static long[] row(String line) {
        String[] fields = line.split(",", -1);
        if (fields.length != 3) {
            throw new IllegalArgumentException("expected 3 fields (" + HEADER + "), got " + fields.length);
        }
        LocalDateTime at = LocalDateTime.parse(fields[0].strip(), TIMESTAMP);
        long micros = at.toEpochSecond(ZoneOffset.UTC) * 1_000_000 + at.getNano() / 1_000;
        return new long[] {micros, tokens("ContextTokens", fields[1]), tokens("GeneratedTokens", fields[2])};
    }

    private static int tokens(String field, String text) {
        int value;
        try {
            value = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(field + " is not a whole number: '" + text.strip() + "'");
        }
        if (value < 1) {
            throw new IllegalArgumentException(field + " must be at least 1, got " + value);
        }
        return value;
    }

    String name() {
        return name;
    }

    List<Row> rows() {
        return rows;
    }

    /** The recorded span, first arrival to last, in microseconds. */
    long spanMicros() {
        return rows.getLast().atMicros();
    }

    /**
     * The requests of a run: slices, compression and rate scaling as the class says, kept so that
     * all of them offer {@code load} of the caches' memory by {@link OfferedLoad}'s estimate.
     *
     * @return the requests, sorted by arrival, and what ran, in words
     */
    public Plan plan(OfferedLoad.Scale scale, double load, long seed) {
        List<ModelProfile> models = scale.models();
        long runMs = scale.duration().toMillis();
        int n = models.size();
        long span = Math.max(1, spanMicros());
        double sliceMicros = span / (double) n;
        double compression = sliceMicros / 1000.0 / runMs;
        SplittableRandom random = new SplittableRandom(seed);
        List<TraceRequest> requests = new ArrayList<>();
        StringBuilder words = new StringBuilder(String.format(Locale.ROOT,
                "%s: %,d requests over %.1f min; each model replays one of %d consecutive slices, compressed %.1fx into %d s,"
                        + " rate-scaled to offer %.2fx the caches' memory in pages (--load) by keeping requests at random (seed %d):",
                name, rows.size(), span / 60e6, n, compression, scale.duration().toSeconds(), load, seed));
        List<List<Row>> slices = new ArrayList<>();
        long[] froms = new long[n];
        long[] tos = new long[n];
        OfferedLoad.Demand all = new OfferedLoad.Demand(n);
        for (int m = 0; m < n; m++) {
            long from = (long) Math.floor(m * sliceMicros);
            long to = m == n - 1 ? span + 1 : (long) Math.floor((m + 1) * sliceMicros);
            froms[m] = from;
            tos[m] = to;
            List<Row> slice = rows.stream().filter(r -> r.atMicros() >= from && r.atMicros() < to).toList();
            slices.add(slice);
            for (Row r : slice) {
                all.add(scale, m, r.contextTokens(), r.generatedTokens());
            }
        }
        double keep = keep(scale, all, load);
        words.append(String.format(Locale.ROOT, " %.2f %% of the requests kept;", keep * 100));
        int id = 0;
        for (int m = 0; m < n; m++) {
            int kept = 0;
            for (Row r : slices.get(m)) {
                if (random.nextDouble() < keep) {
                    long at = Math.min(runMs - 1, Math.round((r.atMicros() - froms[m]) / 1000.0 / compression));
                    requests.add(new TraceRequest(id++, m, at, r.contextTokens(), r.generatedTokens()));
                    kept++;
                }
            }
            words.append(String.format(Locale.ROOT, " %s minutes %.1f-%.1f (%,d of %,d)%s", models.get(m).name(),
                    froms[m] / 60e6, Math.min(tos[m], span) / 60e6, kept, slices.get(m).size(), m == n - 1 ? "" : ";"));
        }
        requests.sort(Comparator.comparingLong(TraceRequest::arrivalMs).thenComparingInt(TraceRequest::id));
        return new Plan(List.copyOf(requests), words.toString());
    }

    /**
     * The probability of keeping a request that makes the kept ones offer {@code load} on average:
     * the estimate grows with the share kept (more pages, and longer steps reading more KV), so it
     * is found by bisection; 1 when the whole trace offers less.
     */
    static double keep(OfferedLoad.Scale scale, OfferedLoad.Demand all, double load) {
        if (OfferedLoad.of(scale, all).all() <= load) {
            return 1;
        }
        double low = 0;
        double high = 1;
        for (int i = 0; i < 60; i++) {
            double mid = (low + high) / 2;
            if (OfferedLoad.of(scale, all.scaled(mid)).all() < load) {
                low = mid;
            } else {
                high = mid;
            }
        }
        return (low + high) / 2;
    }

    /**
     * The requests of one run and what ran, in words.
     *
     * @param requests sorted by arrival
     * @param description which trace, slicing and scaling ran
     */
    public record Plan(List<TraceRequest> requests, String description) {
    }
}

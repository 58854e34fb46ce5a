package io.kvpager.harness.soak;

import io.kvpager.Layout;
import io.kvpager.harness.Bounded;
import io.vertx.core.Vertx;

import java.time.Duration;

/**
 * The long soak, on demand:
 * <pre>{@code
 * java -cp <test-harness classpath> io.kvpager.harness.soak.SoakMain [ops, default 1000000] [seed, default 42] [PAGE_MAJOR|PER_LAYER]
 * }</pre>
 * Prints the report and exits with 0, or prints the broken rule and exits with 1.
 */
public final class SoakMain {

    private SoakMain() {
    }

    public static void main(String[] args) {
        long ops = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        long seed = args.length > 1 ? Long.parseLong(args[1]) : 42;
        Layout layout = args.length > 2 ? Layout.valueOf(args[2]) : Layout.PAGE_MAJOR;
        System.out.println("soak: " + ops + " operations, seed " + seed + ", " + layout);
        Vertx vertx = Vertx.vertx();
        int status = 1;
        try {
            SoakReport report = Soak.run(vertx, "soak-main", SoakOptions.of(ops, seed).withLayout(layout));
            System.out.println(report.describe());
            status = 0;
        } catch (RuntimeException e) {
            System.out.println("soak failed: " + e.getMessage());
            e.printStackTrace();
        } finally {
            Bounded.await(vertx.close(), Duration.ofSeconds(30), "closing Vert.x");
        }
        System.exit(status);
    }
}

package io.kvpager.harness.gpu;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.function.Supplier;

/**
 * Repeats a map-then-unmap step as an engine would: from a Vert.x event-loop context of its own,
 * each phase started when the last one completes, timed there.
 */
final class TwoPhaseLoop {

    /** One step: {@link #map} (e.g. an allocation that maps pages), then {@link #unmap} (the free that unmaps them). */
    interface Step {
        Future<?> map();

        Future<?> unmap();
    }

    private TwoPhaseLoop() {
    }

    /** Medians in µs of the map and the unmap phase over {@code repeats} steps. */
    static double[] medians(Vertx vertx, int repeats, Supplier<Step> steps) {
        double[][] times = Await.of(run(vertx, repeats, steps));
        return new double[] {Spread.median(times[0]), Spread.median(times[1])};
    }

    /** Medians in µs of the map and the unmap phase over {@code repeats} steps started on {@code context}. */
    static double[] medians(Context context, int repeats, Supplier<Step> steps) {
        double[][] times = Await.of(run(context, repeats, steps));
        return new double[] {Spread.median(times[0]), Spread.median(times[1])};
    }

    /** Every phase's µs: {@code [0]} the maps, {@code [1]} the unmaps. */
    static Future<double[][]> run(Vertx vertx, int repeats, Supplier<Step> steps) {
        return run(vertx.getOrCreateContext(), repeats, steps);
    }

    /** Every phase's µs, the steps started on {@code context}: {@code [0]} the maps, {@code [1]} the unmaps. */
    static Future<double[][]> run(Context context, int repeats, Supplier<Step> steps) {
        Promise<double[][]> done = Promise.promise();
        double[][] times = {new double[repeats], new double[repeats]};
        context.runOnContext(v -> step(steps, 0, times, done));
        return done.future();
    }

    private static void step(Supplier<Step> steps, int i, double[][] times, Promise<double[][]> done) {
        if (i == times[0].length) {
            done.complete(times);
            return;
        }
        Step step = steps.get();
        long t0 = System.nanoTime();
        step.map().compose(mapped -> {
            long t1 = System.nanoTime();
            return step.unmap().map(unmapped -> {
                times[0][i] = (t1 - t0) / 1e3;
                times[1][i] = (System.nanoTime() - t1) / 1e3;
                return unmapped;
            });
        }).onSuccess(x -> step(steps, i + 1, times, done)).onFailure(done::fail);
    }
}

package io.kvpager.cli.demo;

import io.vertx.core.Future;

/**
 * GPU work an engine runs over one decode step's live sequences, such as attention over their
 * blocks. The step's batch fence is retired only once the returned future completes, so no page
 * the kernels read is unmapped under them.
 */
@FunctionalInterface
interface BatchKernels {

    /** No kernels: the simulated device, or a GPU run without attention. */
    BatchKernels NONE = (tables, lengths) -> Future.succeededFuture();

    /**
     * Queues the kernels for sequences whose block tables and lengths in tokens are given (copies
     * the kernels own); completes once they have finished on the GPU.
     */
    Future<Void> launch(int[][] tables, int[] lengths);
}

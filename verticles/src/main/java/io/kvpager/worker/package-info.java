/**
 * The public worker API: {@link io.kvpager.worker.RankWorker#deploy} deploys the worker of one
 * rank from {@link io.kvpager.worker.RankWorkerOptions}. This is all an embedder, the command line
 * or a cluster node needs to run a rank; the worker itself runs on the rank's own thread, behind it.
 */
@ModuleGen(name = "kvpager-worker", groupPackage = "io.kvpager")
package io.kvpager.worker;

import io.vertx.codegen.annotations.ModuleGen;

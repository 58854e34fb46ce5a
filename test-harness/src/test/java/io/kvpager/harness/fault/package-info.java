/**
 * The fault matrix: every combination of driver call, rank, page of the batch, kind of fault and
 * layout, each on a pool of its own ({@link io.kvpager.harness.fault.FaultMatrix}).
 */
package io.kvpager.harness.fault;

/**
 * The soak: a TP=4 cache on simulated GPUs driven for a long run of allocations and frees with
 * random driver faults, checked against its devices as it goes ({@link io.kvpager.harness.soak.Soak}).
 * A short run is a test of the build; {@link io.kvpager.harness.soak.SoakMain} runs the long one.
 */
package io.kvpager.harness.soak;

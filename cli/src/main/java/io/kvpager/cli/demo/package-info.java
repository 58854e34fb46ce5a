/**
 * {@code kvpager demo}, the main job: several models share one GPU through elastic caches, driven
 * by a seeded, bursty serving trace. A toy engine per model batches requests step by step, grows
 * their KV block by block, brackets each step with a batch fence and preempts a request on a miss;
 * the run reports latency, misses and memory per model, compares with a static split of the GPU,
 * charts memory over time, and checks its own invariants at the end.
 */
package io.kvpager.cli.demo;

/**
 * The cluster's shared records that decide memory (the GPU budgets, the instance directory),
 * sealed with a MAC keyed by the cluster's secret ({@link io.kvpager.internal.books.SealedMap}), and
 * where a node opens them ({@link io.kvpager.internal.books.SealedBooks}): sealed when its cluster has a
 * secret, plain otherwise.
 */
package io.kvpager.internal.books;

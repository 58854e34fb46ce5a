package io.kvpager;

import io.vertx.codegen.annotations.GenIgnore;

/**
 * The outcome of a revisioned memory-limit change.
 *
 * @param outcome what happened
 * @param revision the revision now in force
 * @param limitBytes the limit now in force, as asked
 * @param effectivePages the limit rounded down to whole page ids
 * @param inUsePages page ids holding blocks when the change was applied
 */
@GenIgnore(GenIgnore.PERMITTED_TYPE)
public record LimitResult(Outcome outcome, long revision, long limitBytes, int effectivePages, int inUsePages) {

    public enum Outcome {
        /** The new limit holds now. */
        APPLIED,
        /** More is in use than the new limit allows; it converges as blocks are freed. */
        DEFERRED,
        /** An older revision than the one in force: ignored. */
        STALE,
        /** The revision in force, with another limit: ignored. */
        CONFLICT
    }
}

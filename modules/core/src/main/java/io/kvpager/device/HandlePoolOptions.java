package io.kvpager.device;

import io.kvpager.Geometry;
import io.kvpager.Layout;

/**
 * What one group adds to its rank's {@link RankHandlePool}: a rank worker reads it from the
 * {@code handlePool} object of {@code create-tensors}, {@code {"prefillPages": n, "boundPages": m}},
 * both counted in page ids.
 * The group's handles are {@code geometry.handleBytes()} each, {@code geometry.handlesPerPageId()}
 * to a page id.
 *
 * <p>{@code boundPages}: how many page ids' worth of unmapped handles the rank keeps idle for this
 * group instead of releasing them. {@code prefillPages}: how many page ids' worth it creates idle
 * when the tensors are created, at most {@code boundPages}.
 *
 * <p>Defaults, chosen so that idle memory stays small and visible:
 * <ul>
 * <li>{@code PER_LAYER}: bound 4 page ids (at most the group's pages). A page id there costs
 *     {@code layers × kvBuffers} creates, about a third of its map time (docs/performance.md, driver calls on an H200);
 *     a page id unmapped is usually soon mapped again by the next refill, so a few page ids of
 *     handles cover the churn. Four page ids hold as much memory as four pages of the reserve.</li>
 * <li>{@code PAGE_MAJOR}: bound 0. An idle compound handle holds a whole page id of memory, too
 *     much to hold from the start; the coordinator has the rank keep handles only while the pool's
 *     pages churn, on top of this bound and counted by the GPU's budget ({@code keep-handles}).</li>
 * <li>prefill 0 for both: memory is taken when pages are first mapped, not at start-up.</li>
 * </ul>
 *
 * <p>Idle handles hold physical memory: the device counts them as used, and the coordinator's
 * accounting must count them as used too, never as free memory another pool could take.
 *
 * @param prefillPages page ids' worth of handles created idle with the tensors
 * @param boundPages page ids' worth of idle handles kept for this group
 */
public record HandlePoolOptions(int prefillPages, int boundPages) {

    /** The default bound of a {@code PER_LAYER} group, in page ids. */
    public static final int PER_LAYER_BOUND_PAGES = 4;

    public HandlePoolOptions {
        if (boundPages < 0 || prefillPages < 0 || prefillPages > boundPages) {
            throw new IllegalArgumentException("handlePool needs 0 <= prefillPages <= boundPages, got prefillPages "
                    + prefillPages + " and boundPages " + boundPages);
        }
    }

    /** The defaults for {@code geometry} (see the class comment). */
    public static HandlePoolOptions defaults(Geometry geometry) {
        return new HandlePoolOptions(0, defaultBoundPages(geometry));
    }

    /**
     * Refuses options that do not suit {@code geometry}: a bound above the group's pages, or more
     * idle handles than a rank counts.
     *
     * @throws IllegalArgumentException (a 400) naming the option and the limit
     */
    public void requireFits(Geometry geometry) {
        if (boundPages > geometry.pages()) {
            throw new IllegalArgumentException("handlePool.boundPages " + boundPages + " is above the group's "
                    + geometry.pages() + " pages");
        }
        if ((long) boundPages * geometry.handlesPerPageId() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("handlePool.boundPages " + boundPages + " of " + geometry.handlesPerPageId()
                    + " handles each is more idle handles than a rank counts; use at most "
                    + Integer.MAX_VALUE / geometry.handlesPerPageId());
        }
    }

    /** The default bound for {@code geometry}, in page ids (see the class comment). */
    public static int defaultBoundPages(Geometry geometry) {
        return geometry.layout() == Layout.PER_LAYER ? Math.min(PER_LAYER_BOUND_PAGES, geometry.pages()) : 0;
    }

    /** The idle handles this group's bound allows. */
    public int boundHandles(Geometry geometry) {
        return boundPages * geometry.handlesPerPageId();
    }

    /** The handles this group's prefill creates. */
    public int prefillHandles(Geometry geometry) {
        return prefillPages * geometry.handlesPerPageId();
    }
}

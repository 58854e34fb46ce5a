package io.kvpager.core;

/** Where one page id of a pool stands, as the {@link PageLedger} sees it. */
public enum PageState {
    /** Not mapped; may be mapped for an allocation or the reserve. */
    FREE,
    /** A map of it is in flight, owned by one allocation or one refill. */
    MAPPING,
    /** Mapped and idle, kept to serve allocations without a map round trip. */
    RESERVE,
    /** Mapped with at least one block handed out (or claimed by an allocation in flight). */
    IN_USE,
    /** Mapped and empty, waiting for its fence before it is unmapped; may be reused meanwhile. */
    RECLAIMED,
    /** An unmap of it is in flight. */
    UNMAPPING,
    /** Its state on some rank is unknown after a failed map or unmap: not handed out until every rank confirms it released. */
    QUARANTINED
}

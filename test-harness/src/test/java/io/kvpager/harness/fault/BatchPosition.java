package io.kvpager.harness.fault;

/** Where in a batch of {@link #BATCH_PAGES} pages the fault strikes. */
enum BatchPosition {
    FIRST(0), MIDDLE(1), LAST(2);

    /** Pages in the batch a case maps or unmaps. */
    static final int BATCH_PAGES = 3;

    private final int index;

    BatchPosition(int index) {
        this.index = index;
    }

    /** The position in the request's page list. */
    int index() {
        return index;
    }
}

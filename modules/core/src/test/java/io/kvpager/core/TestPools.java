package io.kvpager.core;

import io.kvpager.Geometry;
import io.kvpager.Layout;

/** Small pools for ledger tests: one layer, one buffer, 2 MiB pages cut into a given number of blocks. */
final class TestPools {

    static final long PAGE = Geometry.DEFAULT_PAGE_BYTES;

    private TestPools() {
    }

    static Geometry geometry(int pages, int blocksPerPage) {
        Geometry geometry = new Geometry(1, 1, PAGE / blocksPerPage, PAGE, pages, Layout.PAGE_MAJOR);
        if (geometry.blocksPerPage() != blocksPerPage) {
            throw new IllegalArgumentException("no block size gives " + blocksPerPage + " blocks per page");
        }
        return geometry;
    }

    /** Bytes of a limit of {@code pages} page ids in a {@link #geometry} pool. */
    static long pagesOf(int pages) {
        return pages * PAGE;
    }
}

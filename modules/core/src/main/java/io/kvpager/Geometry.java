package io.kvpager;

/**
 * The shape of one KV pool on one rank: {@code layers × kvBuffers} tensors (or one compound
 * tensor for {@link Layout#PAGE_MAJOR}), each {@code pages} page ids of {@code pageBytes}, cut into
 * blocks of {@code blockBytes}. Block ids are global: block {@code b} lies in page
 * {@code b / blocksPerPage()}. A block never straddles a page boundary; the tail of a page that is
 * smaller than a block is never handed out.
 *
 * <p>Every size is validated when the geometry is made, with a message that says what would fit.
 */
public record Geometry(int layers, int kvBuffers, long blockBytes, long pageBytes, int pages, Layout layout) {

    /** The driver's usual granularity and kvpager's default page size: 2 MiB. */
    public static final long DEFAULT_PAGE_BYTES = 2L << 20;

    public Geometry {
        if (layout == null) {
            throw new IllegalArgumentException("layout is required: PER_LAYER or PAGE_MAJOR");
        }
        if (layers <= 0) {
            throw new IllegalArgumentException("layers must be at least 1, got " + layers);
        }
        if (kvBuffers <= 0) {
            throw new IllegalArgumentException("kvBuffers must be at least 1 (2 for K and V, 1 for MLA), got " + kvBuffers);
        }
        if (pageBytes <= 0) {
            throw new IllegalArgumentException("pageBytes must be positive, got " + pageBytes
                    + "; the default is " + DEFAULT_PAGE_BYTES + " (2 MiB)");
        }
        if (blockBytes <= 0) {
            throw new IllegalArgumentException("blockBytes must be positive, got " + blockBytes);
        }
        if (blockBytes > pageBytes) {
            throw new IllegalArgumentException("a block of " + blockBytes + " bytes does not fit in a page of "
                    + pageBytes + " bytes; use blockBytes <= " + pageBytes + " or a larger pageBytes");
        }
        if (pages <= 0) {
            throw new IllegalArgumentException("pages must be at least 1, got " + pages);
        }
        long perPageId = checkedProduct(pageBytes, (long) layers * kvBuffers, "one page id");
        long maxPages = Long.MAX_VALUE / 2 / perPageId;
        if (pages > maxPages) {
            throw new IllegalArgumentException(pages + " pages of " + perPageId + " bytes overflow the virtual range; at most "
                    + maxPages + " pages fit with this geometry");
        }
        if (blocksPerPage(pageBytes, blockBytes) * (long) pages > Integer.MAX_VALUE) {
            long fit = Integer.MAX_VALUE / blocksPerPage(pageBytes, blockBytes);
            throw new IllegalArgumentException(pages + " pages of " + blocksPerPage(pageBytes, blockBytes)
                    + " blocks overflow the block id range; at most " + fit + " pages fit, or use larger blocks");
        }
    }

    /** A geometry with the default 2 MiB pages. */
    public static Geometry of(int layers, int kvBuffers, long blockBytes, int pages, Layout layout) {
        return new Geometry(layers, kvBuffers, blockBytes, DEFAULT_PAGE_BYTES, pages, layout);
    }

    /**
     * Checks this geometry against a device's allocation granularity.
     *
     * @throws IllegalArgumentException when {@code pageBytes} is not a multiple of it
     */
    public Geometry requireGranularity(long granularity) {
        if (granularity <= 0) {
            throw new IllegalArgumentException("granularity must be positive, got " + granularity);
        }
        if (pageBytes % granularity != 0) {
            long down = pageBytes / granularity * granularity;
            long up = down + granularity;
            throw new IllegalArgumentException("pageBytes " + pageBytes + " is not a multiple of the device granularity "
                    + granularity + "; use " + (down > 0 ? down + " or " : "") + up);
        }
        return this;
    }

    /** Blocks in one page id; the tail of a page shorter than a block is left unused. */
    public int blocksPerPage() {
        return blocksPerPage(pageBytes, blockBytes);
    }

    /** All block ids of the pool: {@code pages × blocksPerPage}. */
    public int totalBlocks() {
        return pages * blocksPerPage();
    }

    /** Tensors per pool: {@code layers × kvBuffers}. */
    public int tensors() {
        return layers * kvBuffers;
    }

    /** Physical bytes one page id costs on one rank, all layers and buffers. */
    public long bytesPerPageId() {
        return pageBytes * tensors();
    }

    /** Driver handles one page id needs: one compound handle, or one per tensor. */
    public int handlesPerPageId() {
        return layout == Layout.PAGE_MAJOR ? 1 : tensors();
    }

    /** Size of one handle: {@code bytesPerPageId()} for PAGE_MAJOR, {@code pageBytes} for PER_LAYER. */
    public long handleBytes() {
        return layout == Layout.PAGE_MAJOR ? bytesPerPageId() : pageBytes;
    }

    /** Virtual bytes of one reserved range: the one compound tensor, or one per-layer tensor. */
    public long rangeBytes() {
        return handleBytes() * pages;
    }

    /** The page id that holds {@code block}. */
    public int pageOf(int block) {
        return block / blocksPerPage();
    }

    /** How many whole page ids fit in {@code bytes} per rank. */
    public int pagesWithin(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("a memory limit cannot be negative: " + bytes);
        }
        return (int) Math.min(pages, bytes / bytesPerPageId());
    }

    private static int blocksPerPage(long pageBytes, long blockBytes) {
        return (int) Math.min(Integer.MAX_VALUE, pageBytes / blockBytes);
    }

    private static long checkedProduct(long a, long b, String what) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " (" + a + " × " + b + " bytes) overflows a 64-bit size");
        }
    }
}

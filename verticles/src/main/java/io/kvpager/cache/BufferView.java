package io.kvpager.cache;

/**
 * Where one (layer, buffer) of a cache's KV tensors lives on one rank: what an attention kernel
 * needs to find block {@code b}, at
 * {@code address + (b / blocksPerPage) * pageStride + (b % blocksPerPage) * blockStride}. The
 * block's {@code blockBytes} bytes start there. The range never moves while the cache is open;
 * addresses are valid in the rank's worker process only (the same CUDA primary context).
 *
 * @param layer the model layer, from 0
 * @param buffer the KV buffer of that layer, from 0 (K and V, or one for MLA)
 * @param address the device address of block 0
 * @param blockBytes the bytes of one block of this layer and buffer
 * @param blockStride the bytes from one block to the next inside a page
 * @param blockCount the blocks of the pool, every block id from 0 to {@code blockCount - 1}
 * @param blocksPerPage the blocks one page id holds
 * @param pageStride the bytes from one page id's first block to the next one's
 */
public record BufferView(int layer, int buffer, long address, long blockBytes, long blockStride, int blockCount,
                         int blocksPerPage, long pageStride) {

    /** The device address of block {@code block}; a block outside the pool fails with an {@link IllegalArgumentException}. */
    public long blockAddress(int block) {
        if (block < 0 || block >= blockCount) {
            throw new IllegalArgumentException("block " + block + " is outside 0.." + (blockCount - 1));
        }
        return address + (long) (block / blocksPerPage) * pageStride + (long) (block % blocksPerPage) * blockStride;
    }

    /** The first address past this view's last block: every block of it lies in {@code [address, end)}. */
    public long end() {
        return blockAddress(blockCount - 1) + blockBytes;
    }
}

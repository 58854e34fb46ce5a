package io.kvpager.harness.fault;

import io.kvpager.Layout;

/** The fault matrix ({@link FaultMatrix}) on pools of layout {@link Layout#PER_LAYER}. */
class FaultMatrixPerLayerTest extends FaultMatrix {

    FaultMatrixPerLayerTest() {
        super(Layout.PER_LAYER);
    }
}

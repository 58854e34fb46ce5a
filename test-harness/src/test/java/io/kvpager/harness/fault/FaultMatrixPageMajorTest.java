package io.kvpager.harness.fault;

import io.kvpager.Layout;

/** The fault matrix ({@link FaultMatrix}) on pools of layout {@link Layout#PAGE_MAJOR}. */
class FaultMatrixPageMajorTest extends FaultMatrix {

    FaultMatrixPageMajorTest() {
        super(Layout.PAGE_MAJOR);
    }
}

package io.kvreuse.transfer.emulator;

/** The emulator calls whose next invocation a test can make fail. */
public enum EmulatedCall {
    REGISTER_MEM,
    PREP_XFER_DLIST,
    MAKE_XFER_REQ,
    POST_XFER_REQ,
    GET_XFER_STATUS,
    LOAD_REMOTE_MD,
    GET_LOCAL_MD
}

package io.kvreuse.agent;

/**
 * Imports engines' regions of one kind of reference: {@code shm://<name>} in emulation, {@code
 * cuda-ipc://…} on GPU hosts. An importer that cannot work in this process says why once, at boot.
 */
interface RegionImporter {

    /** The reference scheme handled, e.g. {@code shm}. */
    String scheme();

    /** Empty when usable; otherwise what is missing and how to fix it. */
    String unavailableReason();

    /** Maps the region named by {@code regionRef}; throws {@link PartRefusedException} when it cannot. */
    ImportedRegion open(String regionRef);
}

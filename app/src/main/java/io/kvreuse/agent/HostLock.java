package io.kvreuse.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.jspecify.annotations.Nullable;

/**
 * One node agent process per host: an exclusive lock on a file, held for the life of the process.
 * The kernel drops it when the process ends, however it ends ({@code kill -9} included), so holding
 * it shows that no earlier agent process of this host is alive — nor any NIXL agent or transfer
 * request such a process held.
 */
final class HostLock implements AutoCloseable {

    private final Path path;
    private final FileChannel channel;
    private final FileLock lock;

    private HostLock(Path path, FileChannel channel, FileLock lock) {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock or fails the start: a second agent for one host is a misconfiguration. */
    static HostLock acquire(Path path) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            @Nullable FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException sameJvm) {
                lock = null;
            }
            if (lock == null) {
                channel.close();
                throw new IllegalStateException("another node agent process of this host holds " + path
                        + ": stop it first (one agent per host), or give this one its own kvreuse.agent.lock-file");
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)));
            return new HostLock(path, channel, lock);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot take the agent's host lock " + path, e);
        }
    }

    /** What holding the lock proves, for quiescence evidence. */
    String evidence() {
        return "host lock " + path + " taken by agent pid "
                + ProcessHandle.current().pid()
                + ": the process that held it has exited, and its NIXL agents and transfer requests with it";
    }

    @Override
    public void close() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

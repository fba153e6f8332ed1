package io.kvreuse.system;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP load balancer in front of the control-plane replicas, as engines and agents would reach
 * them in production: each new connection goes to the next replica that accepts it (round robin),
 * and a connection to a replica that dies is simply cut. Bytes are forwarded untouched.
 */
final class Balancer implements AutoCloseable {

    private final List<InetSocketAddress> backends = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ServerSocket server;
    private final AtomicInteger next = new AtomicInteger();
    private volatile boolean open = true;
    private volatile boolean blocked;

    Balancer(List<String> baseUrls) throws IOException {
        baseUrls.forEach(this::add);
        this.server = new ServerSocket(0, 512, java.net.InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("balancer-accept").start(this::accept);
    }

    /** Sends new connections to one more replica too. */
    void add(String baseUrl) {
        URI u = URI.create(baseUrl);
        backends.add(new InetSocketAddress(u.getHost(), u.getPort()));
    }

    /**
     * Closes every new connection at once (and keeps doing so until {@link #unblock()}), as when
     * engines and agents cannot reach the control plane yet; connections already routed go on.
     */
    void block() {
        blocked = true;
    }

    void unblock() {
        blocked = false;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (open) {
            try {
                Socket client = server.accept();
                Thread.ofVirtual().start(() -> route(client));
            } catch (IOException e) {
                if (open) {
                    sleep(10);
                }
            }
        }
    }

    private void route(Socket client) {
        if (blocked) {
            close(client);
            return;
        }
        int first = Math.floorMod(next.getAndIncrement(), backends.size());
        for (int i = 0; i < backends.size(); i++) {
            Socket backend = new Socket();
            try {
                backend.connect(backends.get((first + i) % backends.size()), 1_000);
                backend.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                Thread.ofVirtual().start(() -> pipe(backend, client));
                pipe(client, backend);
                return;
            } catch (IOException refused) {
                close(backend);
            }
        }
        close(client);
    }

    private static void pipe(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException cut) {
            // either side went away: close both below
        } finally {
            close(from);
            close(to);
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws IOException {
        open = false;
        server.close();
    }
}

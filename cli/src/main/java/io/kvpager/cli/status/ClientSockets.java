package io.kvpager.cli.status;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The TLS sockets of a one-shot client: those of its context, offering X25519 alone for the key
 * exchange. The JDK's client otherwise sends a second key share, on P-256, which a kvpager node
 * (X25519 first) never picks, and whose first generation in a JVM precomputes the curve's table of
 * generator multiples (60 point multiplications: 70-115 ms of CPU on C1, where an X25519 key pair
 * takes 10; a P-256 store builds the table anyway, when its certificate is checked at load). Every
 * kvpager node runs on a JDK that speaks X25519.
 */
public final class ClientSockets extends SSLSocketFactory {

    /** The one group offered; a node without it fails the handshake with {@code handshake_failure}. */
    public static final String GROUP = "x25519";

    private final SSLSocketFactory sockets;

    ClientSockets(SSLSocketFactory sockets) {
        this.sockets = sockets;
    }

    private Socket offer(Socket socket) {
        if (socket instanceof SSLSocket tls) {
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setNamedGroups(new String[] {GROUP});
            tls.setSSLParameters(parameters);
        }
        return socket;
    }

    @Override
    public String[] getDefaultCipherSuites() {
        return sockets.getDefaultCipherSuites();
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return sockets.getSupportedCipherSuites();
    }

    @Override
    public Socket createSocket() throws IOException {
        return offer(sockets.createSocket());
    }

    @Override
    public Socket createSocket(Socket socket, String host, int port, boolean autoClose) throws IOException {
        return offer(sockets.createSocket(socket, host, port, autoClose));
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return offer(sockets.createSocket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return offer(sockets.createSocket(host, port, localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return offer(sockets.createSocket(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return offer(sockets.createSocket(address, port, localAddress, localPort));
    }
}

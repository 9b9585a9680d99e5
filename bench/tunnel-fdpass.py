#!/usr/bin/env python3
# ProxyCommand for `ssh -o ProxyUseFdpass=yes`: opens POST /tunnel/{lease}/tcp, consumes exactly the
# 200 head, then hands the connected socket to ssh (SCM_RIGHTS on stdout) and exits, so no client-side
# relay process stays in the path. Usage: tunnel-fdpass.py HOST PORT LEASE_HASH X_SIGNATURE
import socket
import sys
import time

host, port, lease, sig = sys.argv[1:5]
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.sendall(f"POST /tunnel/{lease}/tcp HTTP/1.1\r\nHost: {host}:{port}\r\nX-Signature: {sig}\r\n\r\n".encode())
while True:
    seen = s.recv(65536, socket.MSG_PEEK)
    if not seen:
        sys.exit("tunnel: connection closed before an answer")
    end = seen.find(b"\r\n\r\n")
    if end >= 0:
        break
    time.sleep(0.001)
head = s.recv(end + 4, socket.MSG_WAITALL)
if not head.startswith(b"HTTP/1.1 200 "):
    sys.exit("tunnel refused: " + head.decode(errors="replace"))
socket.send_fds(socket.socket(fileno=1), [b"\0"], [s.fileno()])

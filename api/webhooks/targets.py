"""Webhook targets: no request forgery into the service's own network. A target's URL is
checked when an endpoint is registered and every address again when it is connected to; an
attempt (:func:`post`) has one deadline as a whole."""


from __future__ import annotations

import http.client
import io
import ipaddress
import logging
import socket
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

#: a receiver's answer is read up to this many bytes (it is only recorded, and briefly)
ANSWER_BYTES = 200


class WebhookError(ValueError):
    """A webhook request that cannot be done; ``field`` names the input at fault (if any)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# -- targets: no request forgery into the service's own network ---------------------

#: NAT64's prefixes (RFC 6052, RFC 8215): the last 32 bits are an IPv4 address
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
#: IPv4-compatible addresses (RFC 4291, deprecated): ``::a.b.c.d``
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with its form's name: IPv4-mapped,
    6to4 (2002::/16), Teredo (2001::/32: its server and client), NAT64, IPv4-compatible."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    found = [("IPv4-mapped", ip.ipv4_mapped), ("6to4", ip.sixtofour),
             *(("Teredo", part) for part in ip.teredo or ()),
             *(("NAT64", low32) for network in _NAT64 if ip in network),
             ("IPv4-compatible", low32 if ip in _COMPATIBLE and int(ip) > 1 else None)]
    return [(form, address) for form, address in found if address is not None]


def _refused_address(address: str) -> str | None:
    """Why ``address`` may not be a webhook's target (``None``: it may). An IPv6 address that
    carries an IPv4 one (6to4, Teredo, NAT64, IPv4-mapped or -compatible) is refused when that is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        for form, inner in _embedded_ipv4(ip):
            reason = _refused_address(str(inner))
            if reason:
                return f"{address} ({form}) carries {reason.removeprefix(str(inner) + ' is ')}: {inner}"
    for test, what in ((ip.is_loopback, "loopback"), (ip.is_link_local, "link-local (cloud metadata)"),
                       (ip.is_private, "private"), (ip.is_multicast, "multicast"), (ip.is_reserved, "reserved"),
                       (ip.is_unspecified, "unspecified"), (not ip.is_global, "not globally routable")):
        if test:
            return f"{address} is a {what} address"
    return None


def check_url(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a webhook URL, or :class:`WebhookError` saying what is wrong."""
    if len(url) > 2000:
        raise WebhookError("the URL is longer than 2,000 characters", "url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookError(f"the URL does not parse: {error}", "url") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookError("the URL must start with https:// (or http://)", "url")
    if not parts.hostname:
        raise WebhookError("the URL names no host", "url")
    if parts.username is not None or parts.password is not None:
        raise WebhookError("the URL may not carry a user name or password: receivers check the signature", "url")
    if parts.fragment:
        raise WebhookError("the URL may not have a #fragment", "url")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _resolve(host: str, port: int) -> list[tuple[Any, ...]]:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookError(f"the host {host!r} does not resolve ({error})", "url") from None


def _refusal(host: str, reason: str) -> str:
    return (f"the host {host!r} resolves to {reason}; webhooks go to public addresses only "
            f"(WEBHOOK_ALLOW_PRIVATE lifts this for private networks)")


def check_target(url: str, allow_private: bool) -> None:
    """Refuse a URL whose host resolves to an address the service must not send to."""
    _, host, port = check_url(url)
    if allow_private:
        return
    for *_, address in _resolve(host, port):
        reason = _refused_address(str(address[0]))
        if reason:
            raise WebhookError(_refusal(host, reason), "url")


class DeadlineExceeded(TimeoutError):
    """An attempt that did not end within its deadline (``WEBHOOK_DEADLINE_SECONDS``)."""


class Deadline:
    """The end of one whole attempt: every step (connecting, the TLS handshake, each send and
    each read of the answer) may take only what is left of it, so a receiver that answers
    a byte at a time cannot make the attempt last longer."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"no whole answer within the attempt's {self.seconds:g} s")
        return left

    def arm(self, sock: socket.socket) -> None:
        sock.settimeout(self.left())


def connect(host: str, port: int, deadline: Deadline, allow_private: bool) -> socket.socket:
    """A TCP connection to ``host``, to the first of its addresses that answers, each checked
    before it is connected to (the name may resolve elsewhere than when it was registered)."""
    failure: OSError | None = None
    for family, kind, protocol, _, address in _resolve(host, port):
        reason = None if allow_private else _refused_address(str(address[0]))
        if reason:
            failure = ConnectionRefusedError(f"refused: {_refusal(host, reason)}")
            continue
        sock = socket.socket(family, kind, protocol)
        try:
            deadline.arm(sock)
            sock.connect(address)
        except OSError as error:
            sock.close()
            if isinstance(error, TimeoutError):
                deadline.left()  # (the deadline's own error once it has passed)
            failure = error
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise failure or ConnectionError(f"the host {host!r} has no address")


class _Timed(io.RawIOBase):
    """A socket's reading side whose every read is given what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.deadline.arm(self.sock)
        try:
            return self.sock.recv_into(buffer)
        except TimeoutError:
            self.deadline.left()
            raise


class _TimedSocket:
    """What ``http.client`` uses of a socket (send, read, close), each step within the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def sendall(self, data: bytes) -> None:
        self.deadline.arm(self.sock)
        try:
            self.sock.sendall(data)
        except TimeoutError:
            self.deadline.left()
            raise

    def makefile(self, mode: str) -> io.BufferedReader:
        assert mode == "rb", mode
        return io.BufferedReader(_Timed(self.sock, self.deadline))

    def close(self) -> None:
        self.sock.close()


class _HTTP(http.client.HTTPConnection):
    """A connection whose every step (connecting, sending, each read of the answer) is within one deadline."""

    deadline: Deadline
    allow_private = False

    def _tcp(self) -> socket.socket:
        return connect(self.host, self.port, self.deadline, self.allow_private)

    def connect(self) -> None:
        self.sock = _TimedSocket(self._tcp(), self.deadline)


class _HTTPS(_HTTP, http.client.HTTPSConnection):
    def connect(self) -> None:
        sock = self._tcp()  # checked before any TLS
        self.deadline.arm(sock)  # (the handshake as a whole: CPython gives it the socket's timeout)
        try:
            tls = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]
        except BaseException as error:
            sock.close()
            if isinstance(error, TimeoutError):
                self.deadline.left()
            raise
        self.sock = _TimedSocket(tls, self.deadline)


def post(url: str, headers: Mapping[str, str], body: bytes, allow_private: bool, deadline: Deadline) -> int:
    """POST ``body`` to ``url``, the whole of it (connecting, sending, the answer's status line,
    headers and first bytes) within ``deadline``; the answer's status code (no answer: an
    ``OSError``, :class:`DeadlineExceeded` when the deadline passed)."""
    scheme, host, port = check_url(url)
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = (_HTTPS if scheme == "https" else _HTTP)(host, port)
    connection.deadline, connection.allow_private = deadline, allow_private
    try:
        connection.request("POST", target, body=body, headers=dict(headers))
        answer = connection.getresponse()
        answer.read(ANSWER_BYTES)
        return answer.status
    finally:
        connection.close()

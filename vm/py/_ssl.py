"""``_ssl`` for fxvm, which has no TLS: the module ``ssl`` imports, so
that libraries importing ``ssl`` at their top (httpx, urllib3, asyncio)
load, with OpenSSL's constant values; every TLS capability is absent
(``HAS_*`` False) and making an SSL context raises ``SSLError`` naming why,
which HTTP clients report as a failed connection (the Hugging Face Hub then
says it could not reach the server and found nothing in the local cache)."""

import os as _os

OPENSSL_VERSION = "fxvm (no TLS)"
OPENSSL_VERSION_NUMBER = 0
OPENSSL_VERSION_INFO = (0, 0, 0, 0, 0)
_OPENSSL_API_VERSION = (0, 0, 0, 0, 0)
_DEFAULT_CIPHERS = ""
_NO_TLS = "fxvm has no TLS: https and other SSL connections are not available (download files beforehand and load them from disk)"

HAS_ALPN = False
HAS_ECDH = False
HAS_NPN = False
HAS_SNI = False
HAS_SSLv2 = False
HAS_SSLv3 = False
HAS_TLS_UNIQUE = False
HAS_TLSv1 = False
HAS_TLSv1_1 = False
HAS_TLSv1_2 = False
HAS_TLSv1_3 = False
HAS_PHA = False
HAS_PSK = False

ALERT_DESCRIPTION_ACCESS_DENIED = 49
ALERT_DESCRIPTION_BAD_CERTIFICATE = 42
ALERT_DESCRIPTION_BAD_CERTIFICATE_HASH_VALUE = 114
ALERT_DESCRIPTION_BAD_CERTIFICATE_STATUS_RESPONSE = 113
ALERT_DESCRIPTION_BAD_RECORD_MAC = 20
ALERT_DESCRIPTION_CERTIFICATE_EXPIRED = 45
ALERT_DESCRIPTION_CERTIFICATE_REVOKED = 44
ALERT_DESCRIPTION_CERTIFICATE_UNKNOWN = 46
ALERT_DESCRIPTION_CERTIFICATE_UNOBTAINABLE = 111
ALERT_DESCRIPTION_CLOSE_NOTIFY = 0
ALERT_DESCRIPTION_DECODE_ERROR = 50
ALERT_DESCRIPTION_DECOMPRESSION_FAILURE = 30
ALERT_DESCRIPTION_DECRYPT_ERROR = 51
ALERT_DESCRIPTION_HANDSHAKE_FAILURE = 40
ALERT_DESCRIPTION_ILLEGAL_PARAMETER = 47
ALERT_DESCRIPTION_INSUFFICIENT_SECURITY = 71
ALERT_DESCRIPTION_INTERNAL_ERROR = 80
ALERT_DESCRIPTION_NO_RENEGOTIATION = 100
ALERT_DESCRIPTION_PROTOCOL_VERSION = 70
ALERT_DESCRIPTION_RECORD_OVERFLOW = 22
ALERT_DESCRIPTION_UNEXPECTED_MESSAGE = 10
ALERT_DESCRIPTION_UNKNOWN_CA = 48
ALERT_DESCRIPTION_UNKNOWN_PSK_IDENTITY = 115
ALERT_DESCRIPTION_UNRECOGNIZED_NAME = 112
ALERT_DESCRIPTION_UNSUPPORTED_CERTIFICATE = 43
ALERT_DESCRIPTION_UNSUPPORTED_EXTENSION = 110
ALERT_DESCRIPTION_USER_CANCELLED = 90
CERT_NONE = 0
CERT_OPTIONAL = 1
CERT_REQUIRED = 2
ENCODING_DER = 2
ENCODING_PEM = 1
HOSTFLAG_ALWAYS_CHECK_SUBJECT = 1
HOSTFLAG_MULTI_LABEL_WILDCARDS = 8
HOSTFLAG_NEVER_CHECK_SUBJECT = 32
HOSTFLAG_NO_PARTIAL_WILDCARDS = 4
HOSTFLAG_NO_WILDCARDS = 2
HOSTFLAG_SINGLE_LABEL_SUBDOMAINS = 16
OP_ALL = 2147483728
OP_CIPHER_SERVER_PREFERENCE = 4194304
OP_ENABLE_MIDDLEBOX_COMPAT = 1048576
OP_IGNORE_UNEXPECTED_EOF = 128
OP_NO_COMPRESSION = 131072
OP_NO_RENEGOTIATION = 1073741824
OP_NO_SSLv2 = 0
OP_NO_SSLv3 = 33554432
OP_NO_TICKET = 16384
OP_NO_TLSv1 = 67108864
OP_NO_TLSv1_1 = 268435456
OP_NO_TLSv1_2 = 134217728
OP_NO_TLSv1_3 = 536870912
OP_SINGLE_DH_USE = 0
OP_SINGLE_ECDH_USE = 0
PROTOCOL_SSLv23 = 2
PROTOCOL_TLS = 2
PROTOCOL_TLS_CLIENT = 16
PROTOCOL_TLS_SERVER = 17
PROTOCOL_TLSv1 = 3
PROTOCOL_TLSv1_1 = 4
PROTOCOL_TLSv1_2 = 5
PROTO_MAXIMUM_SUPPORTED = -1
PROTO_MINIMUM_SUPPORTED = -2
PROTO_SSLv3 = 768
PROTO_TLSv1 = 769
PROTO_TLSv1_1 = 770
PROTO_TLSv1_2 = 771
PROTO_TLSv1_3 = 772
SSL_ERROR_EOF = 8
SSL_ERROR_INVALID_ERROR_CODE = 10
SSL_ERROR_SSL = 1
SSL_ERROR_SYSCALL = 5
SSL_ERROR_WANT_CONNECT = 7
SSL_ERROR_WANT_READ = 2
SSL_ERROR_WANT_WRITE = 3
SSL_ERROR_WANT_X509_LOOKUP = 4
SSL_ERROR_ZERO_RETURN = 6
VERIFY_ALLOW_PROXY_CERTS = 64
VERIFY_CRL_CHECK_CHAIN = 12
VERIFY_CRL_CHECK_LEAF = 4
VERIFY_DEFAULT = 0
VERIFY_X509_PARTIAL_CHAIN = 524288
VERIFY_X509_STRICT = 32
VERIFY_X509_TRUSTED_FIRST = 32768


class SSLError(OSError):
    """An error of the TLS layer (here: that there is none)."""

    library = None
    reason = None


class SSLZeroReturnError(SSLError):
    pass


class SSLWantReadError(SSLError):
    pass


class SSLWantWriteError(SSLError):
    pass


class SSLSyscallError(SSLError):
    pass


class SSLEOFError(SSLError):
    pass


class SSLCertVerificationError(SSLError, ValueError):
    pass


def _unavailable(*args, **kwargs):
    raise SSLError(_NO_TLS)


class _SSLContext:
    def __new__(cls, *args, **kwargs):
        _unavailable()


class MemoryBIO:
    def __new__(cls, *args, **kwargs):
        _unavailable()


class SSLSession:
    def __new__(cls, *args, **kwargs):
        _unavailable()


# The two objects ssl.py names at import (Purpose.SERVER_AUTH/CLIENT_AUTH):
# (nid, short name, long name, OID), as OpenSSL's object table gives them.
_OBJECTS = (
    (129, "serverAuth", "TLS Web Server Authentication", "1.3.6.1.5.5.7.3.1"),
    (130, "clientAuth", "TLS Web Client Authentication", "1.3.6.1.5.5.7.3.2"),
)


def txt2obj(txt, name=False):
    for obj in _OBJECTS:
        if txt == obj[3] or (name and txt in obj[1:3]):
            return obj
    raise ValueError(f"unknown object '{txt}'")


def nid2obj(nid):
    for obj in _OBJECTS:
        if nid == obj[0]:
            return obj
    raise ValueError(f"unknown NID {nid}")


def RAND_status():
    return True


def RAND_add(string, entropy):
    """Entropy is the operating system's; nothing to add."""


def RAND_bytes(n):
    if n < 0:
        raise ValueError("num must be positive")
    return _os.urandom(n)


def get_default_verify_paths():
    return ("SSL_CERT_FILE", "", "SSL_CERT_DIR", "")

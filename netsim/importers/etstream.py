"""Chakra's file framing: a varint length-delimited stream of protobuf messages.

A Chakra ET file holds one ``GlobalMetadata`` then ``Node`` messages, each
preceded by its byte length as a base-128 varint (the framing of protobuf's
``writeDelimitedTo``).  This module reads and writes that framing; it knows
nothing about the messages.
"""
from __future__ import annotations

from ..errors import InputError


def encode_varint(n: int) -> bytes:
    """Base-128 varint of a non-negative integer (low 7 bits first)."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def split_messages(data: bytes, source: str) -> list[bytes]:
    """The length-delimited messages of ``data``; a truncated stream is an :class:`InputError`."""
    out, pos, n = [], 0, len(data)
    while pos < n:
        start, length, shift = pos, 0, 0
        while True:
            if pos >= n or shift > 63:
                raise InputError("truncated or corrupt length prefix", source=source,
                                 where=f"message {len(out)} at byte {start}", value=data[start:start + 10].hex(),
                                 accepted="a varint length-delimited protobuf stream (Chakra ET)")
            b = data[pos]
            pos += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if pos + length > n:
            raise InputError(f"message needs {length} bytes but only {n - pos} remain", source=source,
                             where=f"message {len(out)} at byte {start}", value=length,
                             accepted="a complete Chakra ET stream")
        out.append(data[pos:pos + length])
        pos += length
    return out


def join_messages(messages) -> bytes:
    """Frame serialized messages with their varint lengths."""
    return b"".join(encode_varint(len(m)) + m for m in messages)

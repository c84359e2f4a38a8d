#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the malformed-frame corpus (tests/corpus/*.bin).

Each file is named <expected>-<what>.bin, where <expected> is the error the
decoder must give (the perr name in lower case: malformed, too_large,
unknown_type, bad_field, version, bad_name) or `any` (must simply not crash:
fuzzer finds whose outcome is not the point). check_proto_wire iterates the
directory. Run from anywhere: python3 tests/corpus/make_corpus.py
The frames are built byte by byte on purpose: no msgpack library would
write most of them.
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def s(text):
    b = text.encode()
    if len(b) < 32:
        return bytes([0xa0 | len(b)]) + b
    if len(b) < 256:
        return b'\xd9' + bytes([len(b)]) + b
    return b'\xda' + struct.pack('>H', len(b)) + b


def u(n):
    if n < 128:
        return bytes([n])
    return b'\xcf' + struct.pack('>Q', n)


def fmap(pairs):
    assert len(pairs) < 16
    return bytes([0x80 | len(pairs)]) + b''.join(k + v for k, v in pairs)


def env(t, *fields, v=u(1), extra=b''):
    pairs = [(s('v'), v), (s('t'), s(t)), (s('id'), u(7))] + list(fields)
    return fmap(pairs) + extra


def arr(*items):
    assert len(items) < 16
    return bytes([0x90 | len(items)]) + b''.join(items)


ITEM = fmap([(s('to'), s('b')), (s('body'), s('hi'))])
SEND_HEAD = b'\x84' + s('v') + u(1) + s('t') + s('SEND') + s('id') + u(7) + s('messages')

CASES = {
    # huge declared lengths, alone and where a field value should be
    'malformed-array32-huge': b'\xdd\xff\xff\xff\xff',
    'malformed-map32-huge': b'\xdf\xff\xff\xff\xff',
    'malformed-str32-huge': b'\xdb\xff\xff\xff\xff',
    'malformed-bin32-huge': b'\xc6\xff\xff\xff\xff',
    'malformed-ext32-huge': b'\xc9\xff\xff\xff\xff\x01',
    'malformed-array16-huge': b'\xdc\xff\xff',
    'malformed-map16-huge': b'\xde\xff\xff\x00',
    'malformed-str8-huge': b'\xd9\xff',
    'malformed-send-messages-array32-huge': SEND_HEAD + b'\xdd\xff\xff\xff\xff',
    'malformed-send-messages-map-count-lie': SEND_HEAD + b'\x91\x8f' + s('to') + s('b'),
    'malformed-send-body-str32-lie': SEND_HEAD + b'\x91\x82' + s('to') + s('b') + s('body')
                                     + b'\xdb\x7f\xff\xff\xff' + b'x' * 16,
    'malformed-array-count-exceeds-bytes': b'\xdc\x00\x10' + b'\xc0' * 15,
    'malformed-map-count-exceeds-bytes': b'\x8f' + b'\xc0' * 29,
    # not one complete value
    'malformed-empty': b'',
    'malformed-trailing-byte': env('HEARTBEAT') + b'\x00',
    'malformed-two-frames': env('HEARTBEAT') + env('HEARTBEAT'),
    'malformed-truncated-hello': env('HELLO', (s('agent'), s('Agent1')))[:-3],
    'malformed-truncated-header': b'\xcf\x00\x00',
    'malformed-never-used-c1': b'\xc1',
    'malformed-c1-inside': fmap([(s('v'), b'\xc1')]),
    # wrong shapes at the top
    'malformed-top-array': arr(s('v'), u(1)),
    'malformed-top-str': s('HELLO'),
    'malformed-top-nil': b'\xc0',
    'malformed-top-int-key': fmap([(u(1), u(1)), (s('t'), s('OK'))]),
    'malformed-duplicate-v': fmap([(s('v'), u(1)), (s('t'), s('OK')), (s('v'), u(1))]),
    'malformed-duplicate-field': env('ACK', (s('seq'), u(1)), (s('seq'), u(2))),
    'malformed-duplicate-unknown': env('OK', (s('x'), u(1)), (s('x'), u(2))),
    'malformed-duplicate-in-item': SEND_HEAD + arr(fmap([(s('to'), s('b')), (s('to'), s('c')),
                                                         (s('body'), s('x'))])),
    # nesting and counts over the limits
    'too_large-depth-17': b'\x91' * 16 + b'\x90',
    'too_large-depth-1000': b'\x91' * 999 + b'\x90',
    'too_large-map-depth-17': (b'\x81' + s('a')) * 16 + b'\x80',
    'too_large-write-value-deep': b'\x84' + s('v') + u(1) + s('t') + s('WRITE') + s('id') + u(1)
                                  + s('ops') + b'\x91\x83' + s('op') + s('set') + s('key') + s('k')
                                  + s('value') + b'\x91' * 20 + b'\x90',
    'too_large-objects': b'\xdd' + struct.pack('>I', 300000) + b'\xc0' * 300000,
    'too_large-name-65': env('HELLO', (s('agent'), s('a' * 65))),
    'too_large-body': SEND_HEAD + arr(fmap([(s('to'), s('b')),
                                            (s('body'), b'\xc6' + struct.pack('>I', 65537) + b'x' * 65537)])),
    'too_large-batch': SEND_HEAD + b'\xdc' + struct.pack('>H', 4097) + ITEM * 4097,
    # envelope
    'version-v2': env('HEARTBEAT', v=u(2)),
    'version-v0': env('HEARTBEAT', v=u(0)),
    'bad_field-v-missing': fmap([(s('t'), s('OK'))]),
    'bad_field-v-str': env('OK', v=s('1')),
    'bad_field-id-negative': fmap([(s('v'), u(1)), (s('t'), s('OK')), (s('id'), b'\xff')]),
    'bad_field-t-int': fmap([(s('v'), u(1)), (s('t'), u(3))]),
    'unknown_type-nope': env('NOPE'),
    'unknown_type-lowercase': env('hello'),
    # fields
    'bad_field-hello-missing-agent': env('HELLO'),
    'bad_field-hello-agent-int': env('HELLO', (s('agent'), u(5))),
    'bad_field-ack-seq-negative': env('ACK', (s('seq'), b'\xd0\x80')),
    'bad_field-ack-seq-float': env('ACK', (s('seq'), b'\xcb' + struct.pack('>d', 1.0))),
    'bad_field-send-empty': SEND_HEAD + b'\x90',
    'bad_field-send-item-not-map': SEND_HEAD + arr(u(1)),
    'bad_field-send-to-and-channel': SEND_HEAD + arr(fmap([(s('to'), s('b')), (s('channel'), s('c')),
                                                           (s('body'), s('x'))])),
    'bad_field-send-no-recipient': SEND_HEAD + arr(fmap([(s('body'), s('x'))])),
    'bad_field-send-body-int': SEND_HEAD + arr(fmap([(s('to'), s('b')), (s('body'), u(1))])),
    'bad_field-any-array-key': b'\x84' + s('v') + u(1) + s('t') + s('WRITE') + s('id') + u(1)
                               + s('ops') + b'\x91\x83' + s('op') + s('set') + s('key') + s('k')
                               + s('value') + b'\x81\x90\x01',
    'malformed-any-duplicate-key': b'\x84' + s('v') + u(1) + s('t') + s('WRITE') + s('id') + u(1)
                                   + s('ops') + b'\x91\x83' + s('op') + s('set') + s('key') + s('k')
                                   + s('value') + b'\x82\x01\x01\x01\x02',
    'bad_name-hello-space': env('HELLO', (s('agent'), s('a b'))),
    'bad_name-hello-empty': env('HELLO', (s('agent'), s(''))),
    'bad_name-listen-dot': env('LISTEN', (s('channel'), s('.x'))),
    'bad_name-send-utf8': SEND_HEAD + arr(fmap([(s('to'), s('\u00e9')), (s('body'), s('x'))])),
    # an empty string as the first key: msgpack-c gives it a NULL pointer,
    # which the duplicate-key sort once passed to memcmp (undefined)
    'any-empty-first-key': fmap([(s(''), u(1)), (s('x'), u(2)), (s('v'), u(1)),
                                 (s('t'), s('HEARTBEAT')), (s('id'), u(1))]),
}


def main():
    rng = random.Random(20261121)
    for i in range(8):
        CASES['any-random-%d' % i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    for name, data in sorted(CASES.items()):
        with open(os.path.join(HERE, name + '.bin'), 'wb') as f:
            f.write(data)
    print('%d files in %s' % (len(CASES), HERE))


if __name__ == '__main__':
    main()

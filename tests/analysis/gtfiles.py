# SPDX-License-Identifier: MIT
"""Writers of gputool's files for tests: profiles (docs/PROFILE.md) and
traces (docs/REPORT.md), and a JSON Schema checker for the subset of
draft 2020-12 that docs/report.schema.json uses (jsonschema is not always
installed)."""
import struct
import zlib

# ---- profiles ----

FRAME, PLACEHOLDER, NAME = 1, 2, 3

METRIC_UNITS = {
    "CPUTIME": "ns", "SAMPLES": "count", "OMP_WORK": "ns", "OMP_WAIT": "ns",
    "GKER": "ns", "GKER_COUNT": "count", "GXCOPY_H2D": "ns", "GXCOPY_H2D_BYTES": "bytes",
    "GXCOPY_D2H": "ns", "GMEM": "ns", "GMSET": "ns", "GSYNC": "ns",
}


def uv(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Profile:
    """A profile built node by node: node(parent, kind, name, file, line,
    module) returns an id; value(node, thread, metric, v) adds a value."""

    def __init__(self, meta=None, threads=1):
        self.strings, self.sidx = [], {}
        self.meta = dict(meta or {})
        self.modules, self.metrics = [], []
        self.threads = [(i, 1000 + i, "initial" if i == 0 else "worker") for i in range(threads)]
        self.nodes = [(0, 0, None, None, 0, None, 0)]
        self.values = {}

    def s(self, text):
        if text is None:
            return None
        if text not in self.sidx:
            self.sidx[text] = len(self.strings)
            self.strings.append(text)
        return self.sidx[text]

    def module(self, path):
        k = self.s(path)
        if k not in self.modules:
            self.modules.append(k)
        return self.modules.index(k)

    def metric(self, name):
        for i, m in enumerate(self.metrics):
            if self.strings[m[0]] == name:
                return i
        self.metrics.append((self.s(name), self.s(METRIC_UNITS.get(name, "ns")), self.s(name.lower())))
        return len(self.metrics) - 1

    def node(self, parent, kind, name, file=None, line=0, module=None, offset=0):
        self.nodes.append((parent, kind, self.s(name), self.s(file), line,
                           None if module is None else self.module(module), offset))
        return len(self.nodes) - 1

    def frame(self, parent, name, file="app.c", line=1):
        return self.node(parent, FRAME, name, file, line, "/bin/app")

    def ph(self, parent, name):
        return self.node(parent, PLACEHOLDER, name)

    def value(self, node, thread, metric, v):
        k = (node, self.metric(metric), thread)
        self.values[k] = self.values.get(k, 0) + v

    def bytes(self):
        for k, v in list(self.meta.items()):
            self.s(k), self.s(v)
        for _i, _t, kind in self.threads:
            self.s(kind)
        ref = lambda x: 0 if x is None else x + 1

        def sec(tag, payload):
            return struct.pack("<IQ", tag, len(payload)) + payload
        out = bytearray(b"GTPROF\0\0" + struct.pack("<II", 1, 0))
        p = uv(len(self.strings)) + b"".join(uv(len(x.encode())) + x.encode() for x in self.strings)
        out += sec(1, p)
        out += sec(2, uv(len(self.meta)) + b"".join(uv(self.sidx[k]) + uv(ref(self.sidx[v]))
                                                    for k, v in self.meta.items()))
        out += sec(3, uv(len(self.modules)) + b"".join(uv(m) for m in self.modules))
        out += sec(4, uv(len(self.metrics)) + b"".join(uv(n) + uv(ref(u)) + uv(ref(d))
                                                       for n, u, d in self.metrics))
        out += sec(5, uv(len(self.threads)) + b"".join(uv(i) + uv(t) + uv(ref(self.s(k)))
                                                       for i, t, k in self.threads))
        p = bytearray(uv(len(self.nodes)))
        for i, (parent, kind, name, file, line, mod, off) in enumerate(self.nodes):
            p += uv(i - parent if i else 0) + uv(kind) + uv(ref(name)) + uv(ref(file)) + uv(line) \
                + uv(ref(mod)) + uv(off)
        out += sec(6, bytes(p))
        groups = {}
        for (node, m, t), v in sorted(self.values.items()):
            if v:
                groups.setdefault(node, []).append((m, t, v))
        p, prev = bytearray(uv(len(groups))), 0
        for node in sorted(groups):
            p += uv(node - prev) + uv(len(groups[node]))
            for m, t, v in groups[node]:
                p += uv(m) + uv(t) + uv(v)
            prev = node
        out += sec(7, bytes(p))
        crc = zlib.crc32(bytes(out))
        out += struct.pack("<IQI", 0, 4, crc)
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.bytes())


# ---- traces ----

CPU, GPU = 0, 1
EV = {"region": 0, "api": 1, "kernel": 2, "copy h2d": 3, "copy d2h": 4, "copy d2d": 5,
      "copy": 6, "memset": 7, "alloc": 8, "sync": 9, "other": 10}


class Trace:
    """A trace: tracks and events, written as chunks (docs/REPORT.md)."""

    def __init__(self):
        self.strings, self.chunks = [], []

    def _chunk(self, tag, payload):
        self.chunks.append(struct.pack("<IQ", tag, len(payload)) + payload +
                           struct.pack("<I", zlib.crc32(payload)))

    def strs(self, *texts):
        first = len(self.strings)
        self.strings.extend(texts)
        self._chunk(1, uv(first) + uv(len(texts)) +
                    b"".join(uv(len(t.encode())) + t.encode() for t in texts))
        return list(range(first, first + len(texts)))

    def tracks(self, tracks):
        """tracks: (id, kind, a, b, name string index or None)"""
        self._chunk(2, uv(len(tracks)) + b"".join(
            uv(i) + uv(k) + uv(a) + uv(b) + uv(0 if n is None else n + 1) for i, k, a, b, n in tracks))

    def events(self, track, events):
        """events: (start, dur, kind, name string or None, profile node or None, corr)"""
        events = sorted(events)
        base = events[0][0] if events else 0
        p, at = bytearray(uv(track) + uv(base) + uv(len(events))), base
        for start, dur, kind, name, node, corr in events:
            p += uv(start - at) + uv(dur) + uv(EV[kind] if isinstance(kind, str) else kind) \
                + uv(0 if name is None else name + 1) + uv(0 if node is None else node + 1) + uv(corr)
            at = start
        self._chunk(3, bytes(p))

    def bytes(self, end=True):
        out = b"GTTRACE\0" + struct.pack("<II", 1, 0) + b"".join(self.chunks)
        if end:
            out += struct.pack("<IQ", 0, 0) + struct.pack("<I", zlib.crc32(b""))
        return out

    def write(self, path, end=True):
        with open(path, "wb") as f:
            f.write(self.bytes(end))


# ---- JSON Schema (the subset docs/report.schema.json uses) ----

class SchemaError(Exception):
    pass


def validate(doc, schema, root=None, at="$"):
    root = root or schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise SchemaError("%s: unsupported $ref %s" % (at, ref))
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        validate(doc, target, root, at)
    if "enum" in schema and doc not in schema["enum"]:
        raise SchemaError("%s: %r not one of %r" % (at, doc, schema["enum"]))
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = False
        for t in types:
            ok |= (t == "object" and isinstance(doc, dict)) or \
                (t == "array" and isinstance(doc, list)) or \
                (t == "string" and isinstance(doc, str)) or \
                (t == "integer" and isinstance(doc, int) and not isinstance(doc, bool)) or \
                (t == "number" and isinstance(doc, (int, float)) and not isinstance(doc, bool)) or \
                (t == "boolean" and isinstance(doc, bool)) or \
                (t == "null" and doc is None)
        if not ok:
            raise SchemaError("%s: %r is not of type %s" % (at, doc, types))
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        if "minimum" in schema and doc < schema["minimum"]:
            raise SchemaError("%s: %r < minimum %r" % (at, doc, schema["minimum"]))
        if "maximum" in schema and doc > schema["maximum"] + 1e-9:
            raise SchemaError("%s: %r > maximum %r" % (at, doc, schema["maximum"]))
    if isinstance(doc, dict):
        for k in schema.get("required", []):
            if k not in doc:
                raise SchemaError("%s: %s is required" % (at, k))
        props = schema.get("properties", {})
        for k, v in doc.items():
            if k in props:
                validate(v, props[k], root, "%s.%s" % (at, k))
            elif "additionalProperties" in schema:
                ap = schema["additionalProperties"]
                if ap is False:
                    raise SchemaError("%s: unexpected property %s" % (at, k))
                if isinstance(ap, dict):
                    validate(v, ap, root, "%s.%s" % (at, k))
    if isinstance(doc, list) and "items" in schema:
        for i, v in enumerate(doc):
            validate(v, schema["items"], root, "%s[%d]" % (at, i))

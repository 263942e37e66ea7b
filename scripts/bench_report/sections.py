"""What each chart of docs/img/ shows: which benchmark rows, grouped how, against which baseline.

A chart is one section of docs/benchmarks.md. Its groups are workloads (the clusters of bars);
within a group each series is one implementation, netbuf's first, then its baselines. A group
names the exact benchmark row of every series it shows, so the filter passed to the program is
derived from these tables and runs nothing that no chart draws. A series may be absent from a
group (that bar is left out).

The summary compares, per chart, a netbuf series with its main baseline over the groups that
have both, as a speed-up (baseline time / netbuf time, or netbuf rate / baseline rate when higher
is better), and takes the geometric mean over those groups.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    netbuf: bool  # netbuf's own series are drawn in blues, baselines in other colours


@dataclass(frozen=True)
class Group:
    label: str  # may hold "\n" (a two-line tick label)
    rows: dict  # series key -> benchmark name (Google Benchmark's run_name) or echo case


@dataclass(frozen=True)
class Chart:
    name: str  # docs/img/<name>.svg
    title: str
    source: str  # the result file it reads: a program name ("utf8_bench") or "echo"
    series: list
    groups: list
    ylabel: str
    # (netbuf series, baseline series, label under the summary bar): the first pair that has
    # figures in at least one group is the one the summary shows.
    summary: list
    # "cpu_ns": median CPU time per iteration; "ns_per_item": 1e9 / items_per_second (median);
    # "msgs_per_s": echo throughput (higher is better).
    metric: str = "cpu_ns"
    quick_groups: int = 2  # --quick runs only the first groups
    extra_sources: list = field(default_factory=list)  # optional result files ("netty_echo")

    @property
    def higher_is_better(self):
        return self.metric == "msgs_per_s"


def _primitive_groups():
    groups = []
    for op in ("write", "read"):
        for width in ("int", "long"):
            for order in ("be", "le"):
                stem = f"{op}_{width}_{order}"
                label = f"{op}{width.capitalize()}\n{order.upper()}"
                groups.append(Group(label, {
                    "netbuf": f"{stem}/netbuf",
                    "cursor": f"{stem}/netbuf_cursor",
                    "floor": f"{stem}/baseline_scalar",
                    "plain": f"{stem}/baseline",
                }))
    return groups


BYTEBUF = Chart(
    name="bytebuf",
    title="ByteBuf primitives: 1024 values per iteration; slices, bulk writes, growth",
    source="byte_buf_bench",
    series=[
        Series("netbuf", "netbuf ByteBuf, per call", True),
        Series("cursor", "netbuf ByteBufWriter/Reader", True),
        Series("floor", "plain C++, scalar loop (the floor)", False),
        Series("plain", "plain C++ (vectorised loop, memcpy, shared_ptr, std::vector)", False),
    ],
    groups=_primitive_groups() + [
        Group("retainedSlice\nvs shared_ptr", {
            "netbuf": "retainedSlice/netbuf", "plain": "retainedSlice/baseline_shared_ptr_copy"}),
        Group("writeBytes\n64 B", {"netbuf": "writeBytes/netbuf/64", "plain": "writeBytes/baseline/64"}),
        Group("writeBytes\n4 KiB", {
            "netbuf": "writeBytes/netbuf/4096", "plain": "writeBytes/baseline/4096"}),
        Group("grow to 1 MiB\nwriteBytes 64 B", {
            "netbuf": "grow_1MiB_bytes64/netbuf", "plain": "grow_1MiB_bytes64/baseline"}),
        Group("grow to 1 MiB\nwriteByte", {
            "netbuf": "grow_1MiB_byte/netbuf", "plain": "grow_1MiB_byte/baseline"}),
        Group("grow to 1 MiB\nensureWritable", {
            "netbuf": "grow_1MiB_ensureWritable/netbuf", "plain": "grow_1MiB_ensureWritable/baseline"}),
    ],
    ylabel="CPU time per iteration",
    summary=[("netbuf", "floor", "per-call ByteBuf\nvs scalar loop")],
)


def _text_groups():
    spec = [
        ("writeAscii", "ascii-1024"), ("writeAscii", "ascii-128"),
        ("writeUtf8/u16", "ascii-1024"), ("writeUtf8/u16", "netty-128"),
        ("writeUtf8/u16", "mixed-1024"), ("writeUtf8/validated", "ascii-1024"),
        ("writeUtf8/validated", "mixed-1024"), ("readUtf8AsUtf16", "ascii-1024"),
        ("readUtf8AsUtf16", "mixed-1024"), ("isValidUtf8", "ascii-1024"),
        ("isValidUtf8", "mixed-1024"),
    ]
    groups = []
    for op, workload in spec:
        rows = {k: f"{op}/{workload}/{k}" for k in ("netbuf", "scalar-loop", "memcpy")}
        if op != "writeAscii":
            rows["codecvt"] = f"{op}/{workload}/codecvt"
        groups.append(Group(f"{op.replace('writeUtf8/', 'writeUtf8 ')}\n{workload}", rows))
    return groups


TEXT = Chart(
    name="text",
    title="Text fast paths: one string per iteration (runtime-dispatched SIMD)",
    source="utf8_bench",
    series=[
        Series("netbuf", "netbuf", True),
        Series("scalar-loop", "scalar loop", False),
        Series("codecvt", "std::wstring_convert + copy", False),
        Series("memcpy", "memcpy of the input bytes", False),
    ],
    groups=_text_groups(),
    ylabel="CPU time per string",
    summary=[("netbuf", "scalar-loop", "text kernels\nvs scalar loop")],
)


def _allocator_groups():
    groups = []
    for size, label in ((64, "64 B"), (256, "256 B"), (4096, "4 KiB"), (65536, "64 KiB"),
                        (1048576, "1 MiB")):
        groups.append(Group(f"LIFO\n{label}", {
            "default": f"BM_AllocRelease_Default/{size}",
            "unpooled": f"BM_AllocRelease_Unpooled/{size}",
            "malloc": f"BM_AllocRelease_Malloc/{size}",
            "vector": f"BM_AllocRelease_Vector/{size}",
        }))
    for size, slots, label in ((0, 8192, "0 B"), (64, 8192, "64 B"), (256, 8192, "256 B"),
                               (4096, 8192, "4 KiB"), (65536, 8192, "64 KiB"),
                               (256, 512, "256 B, 512 slots")):
        groups.append(Group(f"random slot\n{label}", {
            "default": f"BM_RandomSlot_Default/{size}/{slots}",
            "unpooled": f"BM_RandomSlot_Unpooled/{size}/{slots}",
            "malloc": f"BM_RandomSlot_Malloc/{size}/{slots}",
        }))
    return groups


ALLOCATOR = Chart(
    name="allocator",
    title="Allocate + release one buffer (LIFO; random slot of 8192 live unless noted)",
    source="allocator_bench",
    series=[
        Series("default", "netbuf default allocator (the pool)", True),
        Series("unpooled", "netbuf UnpooledByteBufAllocator", True),
        Series("malloc", "malloc/free", False),
        Series("vector", "std::vector<uint8_t>", False),
    ],
    groups=_allocator_groups(),
    ylabel="CPU time per allocate + release",
    summary=[("default", "malloc", "default allocator\nvs malloc/free")],
)

COMPOSITE = Chart(
    name="composite",
    title="CompositeByteBuf against one contiguous ByteBuf or the hand-built alternative",
    source="composite_bench",
    series=[
        Series("composite", "netbuf CompositeByteBuf", True),
        Series("baseline", "contiguous ByteBuf / copy into one / hand-built iovecs", False),
    ],
    groups=[
        Group("512 x readLong\n8 x 512 B", {
            "composite": "read/readLong/composite_8x512", "baseline": "read/readLong/contiguous_4096"}),
        Group("4096 x getByte\n8 x 512 B", {
            "composite": "read/getByte/composite_8x512", "baseline": "read/getByte/contiguous_4096"}),
        Group("build from\n16 slices", {
            "composite": "build/composite_of_slices/16", "baseline": "build/copy_into_one/16"}),
        Group("build from\n256 slices", {
            "composite": "build/composite_of_slices/256", "baseline": "build/copy_into_one/256"}),
        Group("gather 16\ncomponents", {
            "composite": "gather/composite_16", "baseline": "gather/hand_built_vector_16"}),
    ],
    ylabel="CPU time per iteration",
    summary=[("composite", "baseline", "composite\nvs contiguous")],
)

FRAME_DECODERS = Chart(
    name="frame_decoders",
    title="Frame decoders: 100,000 frames of 64 B in 16 KiB reads",
    source="codec_bench",
    series=[
        Series("merge", "netbuf, Merge cumulator", True),
        Series("composite", "netbuf, Composite cumulator", True),
        Series("hand_written", "hand-written loop (string_views, no refcounts)", False),
    ],
    groups=[
        Group("LengthFieldBased\nFrameDecoder", {
            "merge": "length_field/merge", "composite": "length_field/composite",
            "hand_written": "length_field/hand_written"}),
        Group("LineBased\nFrameDecoder", {
            "merge": "line/merge", "composite": "line/composite", "hand_written": "line/hand_written"}),
    ],
    ylabel="CPU time per frame",
    summary=[("merge", "hand_written", "frame decoders\nvs hand-written")],
    metric="ns_per_item",
)


def _echo_groups():
    groups = []
    for conns in (1, 16):
        for size, size_label in ((128, "128 B"), (16384, "16 KiB")):
            for window in (1, 64):
                case = (conns, size, window)
                groups.append(Group(
                    f"{conns} conn{'s' if conns > 1 else ''}\n{size_label}, w {window}",
                    {"netbuf": ("echo", "netbuf") + case, "asio": ("echo", "asio") + case,
                     "netbuf_own": ("netty_echo", "netbuf") + case,
                     "netty": ("netty_echo", "netty") + case}))
    return groups


ECHO = Chart(
    name="echo",
    title="Echo over loopback TCP: one server I/O thread, one client thread, w = messages in flight",
    source="echo",
    series=[
        Series("netbuf", "netbuf echo server", True),
        Series("asio", "plain Boost.Asio echo server (the floor)", False),
        Series("netbuf_own", "netbuf serve echo, own process", True),
        Series("netty", "Netty 4.1 echo server, own process", False),
    ],
    groups=_echo_groups(),
    ylabel="messages per second",
    summary=[("netbuf_own", "netty", "echo server\nvs Netty 4.1"),
             ("netbuf", "asio", "echo server\nvs plain Asio")],
    metric="msgs_per_s",
    quick_groups=8,  # the echo matrix always runs whole
    extra_sources=["netty_echo"],
)

# (connections, calls in flight per connection) of the MessagePack-RPC client chart.
RPC_CASES = [(1, 1), (1, 16), (4, 32)]

RPC = Chart(
    name="rpc",
    title="MessagePack-RPC client over loopback: add(i, 1), callbacks against coroutines",
    source="rpc",
    series=[
        Series("callback", "netbuf client, callback per call", True),
        Series("coroutine", "netbuf client, one coroutine per call in flight (use_awaitable)", True),
    ],
    groups=[Group(f"{c} conn{'s' if c > 1 else ''}\n{w} in flight",
                  {"callback": ("rpc", "callback", c, 0, w),
                   "coroutine": ("rpc", "coroutine", c, 0, w)}) for c, w in RPC_CASES],
    ylabel="calls per second",
    summary=[],  # both series are netbuf's: the section's table gives the ratio
    metric="msgs_per_s",
    quick_groups=3,
)

MSGPACK = Chart(
    name="msgpack",
    title="MessagePack encode and decode against msgpack-c",
    source="msgpack_bench",
    series=[
        Series("netbuf", "netbuf", True),
        Series("msgpackc", "msgpack-c 4.1", False),
    ],
    groups=[
        Group("encode small\ntree", {
            "netbuf": "encode/small/netbuf/value_canonical", "msgpackc": "encode/small/msgpackc/object"}),
        Group("encode small\nstreaming", {
            "netbuf": "encode/small/netbuf/writer", "msgpackc": "encode/small/msgpackc/packer"}),
        Group("encode mixed\ntree", {
            "netbuf": "encode/mixed/netbuf/value", "msgpackc": "encode/mixed/msgpackc/object"}),
        Group("decode small\nfresh", {
            "netbuf": "decode/small/netbuf/fresh", "msgpackc": "decode/small/msgpackc/unpack"}),
        Group("decode small\nreused", {
            "netbuf": "decode/small/netbuf/reused", "msgpackc": "decode/small/msgpackc/reused_zone"}),
        Group("decode mixed\nfresh", {
            "netbuf": "decode/mixed/netbuf/fresh", "msgpackc": "decode/mixed/msgpackc/unpack"}),
        Group("decode mixed\nreused", {
            "netbuf": "decode/mixed/netbuf/reused", "msgpackc": "decode/mixed/msgpackc/reused_zone"}),
        Group("decode bin\n64 KiB", {
            "netbuf": "decode/bin/netbuf/reused/65536", "msgpackc": "decode/bin/msgpackc/unpack/65536"}),
        Group("decode bin 64 KiB\nzero copy", {
            "netbuf": "decode/bin/netbuf/bytebuf/65536",
            "msgpackc": "decode/bin/msgpackc/referenced/65536"}),
    ],
    ylabel="CPU time per message",
    summary=[("netbuf", "msgpackc", "MessagePack\nvs msgpack-c")],
)

JSON = Chart(
    name="json",
    title="JSON writing: canonical small object, 565 KB twitter-like document",
    source="json_bench",
    series=[
        Series("netbuf", "netbuf", True),
        Series("rapidjson", "RapidJSON 1.1", False),
        Series("nlohmann", "nlohmann::json 3.11", False),
    ],
    groups=[
        Group("small canonical\ntree", {
            "netbuf": "small/netbuf/canonical", "rapidjson": "small/rapidjson/sorted",
            "nlohmann": "small/nlohmann/dump"}),
        Group("small canonical\nsorted map", {
            "netbuf": "small/netbuf/sorted-map", "rapidjson": "small/rapidjson/sorted",
            "nlohmann": "small/nlohmann/dump"}),
        Group("small canonical\ntyped struct", {
            "netbuf": "small/netbuf/typed", "rapidjson": "small/rapidjson/sorted",
            "nlohmann": "small/nlohmann/dump"}),
        Group("twitter\nwrite", {
            "netbuf": "twitter/write/netbuf", "rapidjson": "twitter/write/rapidjson",
            "nlohmann": "twitter/write/nlohmann"}),
    ],
    ylabel="CPU time per document",
    summary=[("netbuf", "rapidjson", "JSON\nvs RapidJSON")],
)

JSON_PARSE = Chart(
    name="json_parse",
    title="JSON parsing into a DOM: twitter-like 565 KB, numbers 1 MB, strings 1.2 MB",
    source="json_bench",
    series=[
        Series("netbuf", "netbuf (default engine: Auto, indexed here)", True),
        Series("byte", "netbuf byte-at-a-time engine", True),
        Series("simdjson", "simdjson 3.0.1 DOM", False),
        Series("rapidjson", "RapidJSON 1.1 DOM", False),
    ],
    groups=[
        Group(f"{doc}\nparse", {
            "netbuf": f"{doc}/parse/netbuf", "byte": f"{doc}/parse/netbuf_byte",
            "simdjson": f"{doc}/parse/simdjson_dom", "rapidjson": f"{doc}/parse/rapidjson_dom"})
        for doc in ("twitter", "numbers", "strings")
    ],
    ylabel="CPU time per document",
    summary=[("netbuf", "simdjson", "JSON parsing\nvs simdjson")],
)

HTTP_PARSE = Chart(
    name="http",
    title="HTTP/1.1 request parsing into head, field views and body slices, against http-parser",
    source="http_bench",
    series=[
        Series("netbuf", "netbuf HttpRequestDecoder", True),
        Series("http_parser", "http-parser 2.9.4", False),
    ],
    groups=[
        Group("browser GET\n703 B", {"netbuf": "get/netbuf", "http_parser": "get/http_parser"}),
        Group("chunked POST\n2203 B", {
            "netbuf": "chunked/netbuf", "http_parser": "chunked/http_parser"}),
    ],
    ylabel="CPU time per request",
    summary=[("netbuf", "http_parser", "HTTP parsing\nvs http-parser")],
)

REDIS_CODEC = Chart(
    name="redis",
    title="RESP: 1000 pipelined SET/GET requests decoded, 1000 bulk replies written",
    source="redis_bench",
    series=[
        Series("netbuf", "netbuf RedisRequestDecoder / RespWriter", True),
        Series("baseline", "hand-written parser / snprintf + append", False),
    ],
    groups=[
        Group("decode 1000\nSET/GET (36 KB)", {
            "netbuf": "requests/netbuf", "baseline": "requests/handwritten"}),
        Group("write 1000\nbulk replies", {
            "netbuf": "replies/netbuf", "baseline": "replies/snprintf"}),
    ],
    ylabel="CPU time per batch",
    summary=[("netbuf", "baseline", "RESP codec\nvs hand-written")],
)

TLS_RECORDS = Chart(
    name="tls",
    title="TLS 1.3 (AES-128-GCM): 256 KiB from one end to the other, without sockets",
    source="tls_bench",
    series=[
        Series("handler", "netbuf SslHandler pair (pipeline included)", True),
        Series("bio", "OpenSSL over netbuf's ByteBuf BIO", True),
        Series("memory", "OpenSSL over memory BIOs", False),
        Series("cipher", "AES-128-GCM alone (floor)", False),
    ],
    groups=[
        Group("256 KiB in\n16 KiB writes", {
            "handler": "tls/handler/SslHandler", "bio": "tls/bio/ByteBuf",
            "memory": "tls/bio/memory", "cipher": "tls/cipher/EVP"}),
    ],
    ylabel="CPU time per 256 KiB",
    summary=[("bio", "memory", "TLS records\nvs memory BIOs")],
)

# In run order: the microbenchmarks first (short, single-threaded), then the echo and RPC loads.
CHARTS = [BYTEBUF, TEXT, ALLOCATOR, COMPOSITE, FRAME_DECODERS, MSGPACK, JSON, JSON_PARSE,
          HTTP_PARSE, REDIS_CODEC, TLS_RECORDS, ECHO, RPC]

PROGRAMS = list(dict.fromkeys(c.source for c in CHARTS if c.source.endswith("_bench")))


def benchmark_names(chart, quick=False):
    """The benchmark rows a chart needs, in first-seen order (a row may serve several groups)."""
    groups = chart.groups[: chart.quick_groups] if quick else chart.groups
    names = []
    for g in groups:
        for key in (s.key for s in chart.series):
            name = g.rows.get(key)
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def benchmark_filter(names):
    """An anchored regular expression (std::regex, ECMAScript) matching exactly these names."""
    special = set("\\^$.|?*+()[]{}")
    escaped = ["".join("\\" + ch if ch in special else ch for ch in n) for n in names]
    return "^(" + "|".join(escaped) + ")$"

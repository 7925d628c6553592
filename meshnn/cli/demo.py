"""``meshnn demo``: a Llama-style decoder run tensor-parallel on a simulated mesh.

The model: token embedding, then ``layers`` decoder blocks (RMSNorm; attention with rotary
embeddings and causal softmax, heads sharded over every device of the mesh; a gated SiLU MLP
with column-parallel gate/up and row-parallel down projections), then a final RMSNorm.  As TTNN
models write it: the fused QKV projection split by ``ttnn.transformer.split_query_key_value_and_
split_heads``, ``ttnn.experimental.rotary_embedding``, causal ``ttnn.transformer.scaled_dot_
product_attention``, ``concatenate_heads``, and the SiLU fused into the gate-times-up multiply
(``input_tensor_a_activations``); head sizes that are not whole tiles take the composed ops.  Tensor
parallelism needs one all_reduce after attention (row-parallel output projection) and a
reduce_scatter + all_gather after the MLP.  Weights are deterministic random numbers made here.

Everything on the mesh goes through the public, ttnn-named API only (``import meshnn as ttnn``).
The reference is the same model in float64 numpy, on the weights exactly as the device holds
them (after conversion to the weight dtype), so the accuracy line measures the mesh's compute.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import meshnn as ttnn

# The accuracy a run must reach, per weight dtype: PCC against the float64 reference.
PCC_BOUND = {"bfloat16": 0.99, "bfloat8_b": 0.98}


@dataclass(frozen=True, slots=True)
class DemoConfig:
    system: str | None = None
    mesh: tuple[int, int] | None = None
    dtype: str = "bfloat16"
    layers: int = 2
    hidden: int = 1024
    seq: int = 128
    heads: int = 16
    fit_heads: bool = False  # heads not given: the fewest of at least ``heads`` that split over the mesh
    vocab: int = 4096
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def intermediate(self) -> int:
        return 256 * math.ceil(self.hidden * 8 / 3 / 256)  # Llama's 8/3 ratio, cut evenly over devices


class Progress:
    """A one-line progress report on a terminal; silent otherwise."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done = total, label, 0
        self.live = sys.stdout.isatty()

    def step(self, what: str) -> None:
        self.done += 1
        if self.live:
            width = 24
            filled = width * self.done // self.total
            sys.stdout.write(
                f"\r  {self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {what:28}"
            )
            sys.stdout.flush()
            if self.done == self.total:
                sys.stdout.write("\n")


def make_weights(config: DemoConfig) -> dict[str, np.ndarray]:
    """Deterministic float32 weights, scaled so activations stay O(1)."""
    rng = np.random.default_rng(config.seed)
    h, i = config.hidden, config.intermediate

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / math.sqrt(rows)).astype(np.float32)

    weights = {
        "embedding": rng.standard_normal((config.vocab, h)).astype(np.float32),
        "norm": (1 + 0.1 * rng.standard_normal(h)).astype(np.float32),
    }
    for layer in range(config.layers):
        weights |= {
            f"{layer}.attn_norm": (1 + 0.1 * rng.standard_normal(h)).astype(np.float32),
            f"{layer}.wq": matrix(h, h),
            f"{layer}.wk": matrix(h, h),
            f"{layer}.wv": matrix(h, h),
            f"{layer}.wo": matrix(h, h),
            f"{layer}.mlp_norm": (1 + 0.1 * rng.standard_normal(h)).astype(np.float32),
            f"{layer}.w_gate": matrix(h, i),
            f"{layer}.w_up": matrix(h, i),
            f"{layer}.w_down": matrix(i, h),
        }
    return weights


def rope_tables(config: DemoConfig) -> tuple[np.ndarray, np.ndarray]:
    half = config.head_dim // 2
    frequencies = 1.0 / (10000 ** (np.arange(half) / half))
    angles = np.outer(np.arange(config.seq), frequencies)
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1)
    return cos.astype(np.float32), sin.astype(np.float32)


def quantized(values: np.ndarray, dtype: ttnn.DataType) -> np.ndarray:
    """``values`` exactly as the device holds them after conversion to ``dtype``."""
    layout = ttnn.TILE_LAYOUT if values.ndim >= 2 else ttnn.ROW_MAJOR_LAYOUT
    return ttnn.to_numpy(ttnn.Tensor(values, dtype, layout=layout)).astype(np.float64)


# ------------------------------------------------------------------------------ the mesh model


class MeshModel:
    """The decoder's weights on the mesh, and its forward pass, through the ttnn API only."""

    def __init__(
        self, config: DemoConfig, weights: dict[str, np.ndarray], mesh: ttnn.MeshDevice, progress: Callable[[str], None]
    ) -> None:
        self.config, self.mesh = config, mesh
        self.n = mesh.get_num_devices()
        dtype = getattr(ttnn, config.dtype)
        tile = ttnn.TILE_LAYOUT
        replicate = ttnn.ReplicateTensorToMesh(mesh)
        self.replicate = replicate

        def put(values: np.ndarray, mapper: ttnn.TensorToMesh, weight_dtype=dtype, layout=tile) -> ttnn.Tensor:
            return ttnn.from_torch(values, dtype=weight_dtype, layout=layout, device=mesh, mesh_mapper=mapper)

        columns = ttnn.ShardTensorToMesh(mesh, dim=1)  # column-parallel: each device its output columns
        rows = ttnn.ShardTensorToMesh(mesh, dim=0)  # row-parallel: each device its input rows
        self.embedding = put(weights["embedding"], replicate, ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT)
        self.norm = put(weights["norm"].reshape(1, -1), replicate, ttnn.bfloat16)
        self.layers = []
        for layer in range(config.layers):
            w = {k.split(".", 1)[1]: v for k, v in weights.items() if k.startswith(f"{layer}.")}
            self.layers.append(
                {
                    "attn_norm": put(w["attn_norm"].reshape(1, -1), replicate, ttnn.bfloat16),
                    "wqkv": put(self.fused_qkv(w), columns),
                    "wo": put(w["wo"], rows),
                    "mlp_norm": put(w["mlp_norm"].reshape(1, -1), replicate, ttnn.bfloat16),
                    "w_gate": put(w["w_gate"], columns),
                    "w_up": put(w["w_up"], columns),
                    "w_down": put(w["w_down"], rows),
                }
            )
            progress(f"layer {layer} weights")
        cos, sin = rope_tables(config)
        self.cos = put(cos.reshape(1, 1, config.seq, -1), replicate, ttnn.bfloat16)
        self.sin = put(sin.reshape(1, 1, config.seq, -1), replicate, ttnn.bfloat16)
        self.mask = None  # SDPA masks itself; a head size it cannot take (not whole tiles) needs one
        if config.head_dim % 32:
            mask = np.triu(np.full((config.seq, config.seq), -1e9, np.float32), 1)
            self.mask = put(mask.reshape(1, 1, config.seq, config.seq), replicate, ttnn.bfloat16)

    def fused_qkv(self, w: dict[str, np.ndarray]) -> np.ndarray:
        """[wq | wk | wv] reordered so that device d's column shard holds its heads of all three."""
        h, n = self.config.hidden, self.n
        parts = [w[k].reshape(h, n, h // n) for k in ("wq", "wk", "wv")]
        return np.stack(parts, axis=2).reshape(h, 3 * h)

    def rotate(self, x: ttnn.Tensor, cos: ttnn.Tensor | None = None, sin: ttnn.Tensor | None = None) -> ttnn.Tensor:
        """Rotary embedding: x * cos + rotate_half(x) * sin (ttnn's fused op takes head sizes that
        are whole pairs of tiles; other sizes compose it from slices); the tables default to the
        prompt's positions."""
        cos, sin = (self.cos, self.sin) if cos is None else (cos, sin)
        b, heads, s, d = x.shape
        if d % 64 == 0:
            rotated = ttnn.experimental.rotary_embedding(x, cos, sin)
            # (its output has whole tiles of rows, as ttnn's: a sequence that is not is cut back)
            return rotated if rotated.shape[2] == s else ttnn.slice(rotated, [0, 0, 0, 0], [b, heads, s, d])
        half = d // 2
        first = ttnn.slice(x, [0, 0, 0, 0], [b, heads, s, half])
        second = ttnn.slice(x, [0, 0, 0, half], [b, heads, s, d])
        rotated = ttnn.concat([ttnn.neg(second), first], dim=3)
        return ttnn.add(ttnn.multiply(x, cos), ttnn.multiply(rotated, sin))

    def attention(self, x: ttnn.Tensor, weights: dict[str, ttnn.Tensor]) -> ttnn.Tensor:
        cfg = self.config
        local_heads, d = cfg.heads // self.n, cfg.head_dim
        qkv = ttnn.linear(x, weights["wqkv"])  # (1, s, 3 * local_heads * d): this device's heads
        q, k, v = ttnn.transformer.split_query_key_value_and_split_heads(
            qkv, num_heads=local_heads, transpose_key=False
        )  # (1, local_heads, s, d) each
        q, k = self.rotate(q), self.rotate(k)
        if self.mask is None:  # whole tiles of head: the fused (flash) attention
            context = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(d))
        else:
            scores = ttnn.multiply(ttnn.matmul(q, k, transpose_b=True), 1.0 / math.sqrt(d))
            context = ttnn.matmul(ttnn.softmax(ttnn.add(scores, self.mask), dim=-1), v)
        partial = ttnn.linear(ttnn.transformer.concatenate_heads(context), weights["wo"])
        return ttnn.all_reduce(partial)  # the row-parallel projection's partial sums

    def mlp(self, x: ttnn.Tensor, weights: dict[str, ttnn.Tensor]) -> ttnn.Tensor:
        gate, up = ttnn.linear(x, weights["w_gate"]), ttnn.linear(x, weights["w_up"])
        gated = ttnn.multiply(gate, up, input_tensor_a_activations=[ttnn.UnaryOpType.SILU])  # silu(gate) * up
        partial = ttnn.linear(gated, weights["w_down"])
        scattered = ttnn.reduce_scatter(partial, dim=2)  # each device: the sum, for its slice of hidden
        return ttnn.all_gather(scattered, dim=2)

    def forward(self, tokens: np.ndarray, progress: Callable[[str], None]) -> ttnn.Tensor:
        ids = ttnn.from_torch(tokens.reshape(1, -1), dtype=ttnn.uint32, device=self.mesh, mesh_mapper=self.replicate)
        x = ttnn.to_layout(ttnn.embedding(ids, self.embedding), ttnn.TILE_LAYOUT)
        for index, weights in enumerate(self.layers):
            attended = self.attention(ttnn.rms_norm(x, epsilon=1e-5, weight=weights["attn_norm"]), weights)
            x = ttnn.add(x, attended)
            x = ttnn.add(x, self.mlp(ttnn.rms_norm(x, epsilon=1e-5, weight=weights["mlp_norm"]), weights))
            progress(f"layer {index} forward")
        return ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm)


# ------------------------------------------------------------------------------ the reference


def reference_forward(
    config: DemoConfig,
    weights: dict[str, np.ndarray],
    tokens: np.ndarray,
    progress: Callable[[str], None] = lambda _: None,
) -> np.ndarray:
    """The same model in float64 numpy (``progress`` is told of each layer done)."""

    def rms(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w

    cos, sin = (t.astype(np.float64) for t in rope_tables(config))
    half, d, s = config.head_dim // 2, config.head_dim, config.seq

    def rotate(x: np.ndarray) -> np.ndarray:
        return x * cos + np.concatenate([-x[..., half:], x[..., :half]], -1) * sin

    mask = np.triu(np.full((s, s), -1e9), 1)
    x = weights["embedding"][tokens]
    for layer in range(config.layers):
        w = {k.split(".", 1)[1]: v for k, v in weights.items() if k.startswith(f"{layer}.")}
        h = rms(x, w["attn_norm"])
        q, k, v = ((h @ w[n]).reshape(s, config.heads, d).transpose(1, 0, 2) for n in ("wq", "wk", "wv"))
        q, k = rotate(q), rotate(k)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d) + mask
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        x = x + (p @ v).transpose(1, 0, 2).reshape(s, -1) @ w["wo"]
        h = rms(x, w["mlp_norm"])
        gate = h @ w["w_gate"]
        x = x + (gate / (1 + np.exp(-gate)) * (h @ w["w_up"])) @ w["w_down"]
        progress(f"layer {layer} float64 check")
    return rms(x, weights["norm"])


def device_weights(config: DemoConfig, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights exactly as the mesh holds them (matrices in the weight dtype, the rest bf16)."""
    dtype = getattr(ttnn, config.dtype)
    out = {}
    for name, value in weights.items():
        matrix = value.ndim == 2 and name != "embedding"
        out[name] = quantized(value if value.ndim == 2 else value.reshape(1, -1), dtype if matrix else ttnn.bfloat16)
        out[name] = out[name].reshape(value.shape)
    return out


def pcc(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.reshape(-1), b.reshape(-1))[0, 1])


# ------------------------------------------------------------------------------------- run


def memory_table(mesh: ttnn.MeshDevice) -> list[str]:
    return ttnn.memory_report(mesh).splitlines()


def splits(config: DemoConfig, n: int) -> bool:
    """Whether the model cuts over ``n`` devices: heads, hidden and the MLP width all do."""
    heads = config.heads
    return not (heads % n or config.hidden % heads or config.intermediate % n or config.hidden % n)


def check_weights_fit(config: DemoConfig) -> None:
    """Refuse (HostMemoryError) a model whose float32 weights, made on the host first, would not
    fit in this machine's memory (``--hidden 999999999``), before anything is made or searched."""
    h, i = config.hidden, config.intermediate
    needed = 4 * (config.layers * (4 * h * h + 3 * h * i + 2 * h) + config.vocab * h + h)
    try:
        available = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not known here: not checked
        return
    if needed > available:
        raise ttnn.HostMemoryError(
            op="meshnn demo",
            needed=needed,
            available=available,
            what=f"the float32 weights of {config.layers} layer(s) of width {h}",
        )


def fitted(config: DemoConfig, n: int) -> DemoConfig:
    """``config`` checked, with its heads chosen for ``n`` devices when ``fit_heads`` (the fewest
    of at least ``heads`` that split over the mesh); a MeshnnValueError saying what to pass when
    the model does not split."""
    for name in ("layers", "hidden", "seq", "vocab"):
        if getattr(config, name) < 1:
            raise ttnn.MeshnnValueError(f"--{name} must be at least 1, got {getattr(config, name)}")
    if config.heads < 1:
        raise ttnn.MeshnnValueError(f"--heads must be at least 1, got {config.heads}")
    check_weights_fit(config)
    if config.fit_heads:
        low = n * math.ceil(config.heads / n)
        candidates = (dataclasses.replace(config, heads=h) for h in range(low, config.hidden + 1, n))
        config = next((c for c in candidates if splits(c, n)), config)
    if splits(config, n):
        return config
    raise ttnn.MeshnnValueError(
        f"--hidden {config.hidden} with {config.heads} heads cannot be cut over {n} devices: heads, hidden and "
        f"the MLP width must be multiples of {n} (and hidden of the heads); {advice(config, n)}"
    )


def advice(config: DemoConfig, n: int) -> str:
    """What to pass instead: other heads for the hidden size asked for when some split over ``n``
    devices (the nearest first), else the nearest hidden size that splits with heads rounded up to
    a multiple of ``n``."""
    heads = [h for h in range(n, config.hidden + 1, n) if splits(dataclasses.replace(config, heads=h), n)]
    if heads:
        heads.sort(key=lambda h: (abs(h - config.heads), -h))
        others = f" (or {', '.join(f'--heads {h}' for h in sorted(heads[1:3]))})" if len(heads) > 1 else ""
        return f"with --hidden {config.hidden}, try --heads {heads[0]}{others}"
    rounded = n * math.ceil(config.heads / n)
    step = rounded * 32 // math.gcd(rounded, 32)  # whole tiles of head, a multiple of the heads
    near = sorted(range(step, 4 * config.hidden + step, step), key=lambda h: (abs(h - config.hidden), -h))
    hidden = next((h for h in near if splits(dataclasses.replace(config, hidden=h, heads=rounded), n)), None)
    return (
        f"try --hidden {hidden} --heads {rounded}"
        if hidden
        else f"try a mesh whose device count divides {config.heads}"
    )


def run(config: DemoConfig) -> int:
    """Run the demo; prints the report and returns the exit code (1 when accuracy is too low)."""
    if config.dtype not in PCC_BOUND:
        raise ttnn.MeshnnValueError(f"--dtype must be one of {sorted(PCC_BOUND)}, got {config.dtype!r}")
    spec = ttnn.system_spec(config.system)
    shape = config.mesh or spec.mesh_shape
    config = fitted(config, shape[0] * shape[1])  # checked before the mesh opens
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), system=spec.name)
    n = mesh.get_num_devices()
    print(
        f"meshnn demo: a {config.layers}-layer Llama-style decoder, tensor-parallel over a {shape[0]}x{shape[1]} "
        f"mesh of the simulated {spec.name} ({spec.description}, {spec.arch_spec.arch})"
    )
    print(
        f"  hidden {config.hidden}, {config.heads} heads ({config.heads // n} per device), "
        f"MLP {config.intermediate}, "
        f"sequence {config.seq}, weights {config.dtype}, activations bfloat16"
    )
    weights = make_weights(config)
    tokens = np.random.default_rng(config.seed + 1).integers(0, config.vocab, config.seq)
    progress = Progress(3 * config.layers, "run")
    try:
        start = time.perf_counter()
        model = MeshModel(config, weights, mesh, progress.step)
        load_time = time.perf_counter() - start
        start = time.perf_counter()
        with ttnn.perf_capture() as prefill:  # the predicted device time of the forward pass
            out = model.forward(tokens, progress.step)
        result = ttnn.to_numpy(ttnn.get_device_tensors(out)[0]).astype(np.float64).reshape(config.seq, -1)
        forward_time = time.perf_counter() - start
        reference = reference_forward(config, device_weights(config, weights), tokens, progress.step)
        score, error = pcc(result, reference), float(np.abs(result - reference).max())
        print(f"  weights to mesh  {load_time:7.2f} s")
        print(f"  forward          {forward_time:7.2f} s")
        bound = PCC_BOUND[config.dtype]
        verdict = "PASS" if score >= bound else "FAIL"
        print(
            f"  accuracy vs float64 numpy: PCC {score:.5f} (bound {bound} for {config.dtype}), "
            f"max abs error {error:.4f}  {verdict}"
        )
        from meshnn.cli.decode_step import predicted_lines

        print("\n".join(predicted_lines(model, prefill)))
        print("  memory of the mesh:")
        for line in memory_table(mesh):
            print(f"    {line}")
        return 0 if score >= bound else 1
    finally:
        mesh.close()

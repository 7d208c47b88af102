"""kctl's optional C extension (kctl._native: the per-record hot loops of dump-segment
--deep-iteration, consume -o jsonl and produce). Everything else is in pyproject.toml. Where it
cannot be compiled (no C compiler or Python headers) the install goes on without it and kctl
runs the pure Python equivalents, which stay the reference in tests."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kctl._native",
            ["kctl/_native.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)

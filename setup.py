"""kctl's optional C extension (kctl._native: the per-record hot loops of dump-segment
--deep-iteration, consume -o jsonl and produce, and produce's own librdkafka producer).
Everything else is in pyproject.toml. Where it cannot be compiled (no C compiler or Python
headers) the install goes on without it and kctl runs the pure Python equivalents (and
confluent-kafka's Producer), which stay the reference in tests."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kctl._native",
            ["kctl/_native.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            # dlopen/dlsym: kctl's producer drives the librdkafka confluent-kafka loaded,
            # looked up at run time (no librdkafka header or link at build time)
            libraries=["dl"],
            optional=True,
        )
    ]
)

"""Kubernetes resource quantities as integers (millicores, bytes)."""

from __future__ import annotations

import contextlib

import pytest

from components.tpu.quantities import format_cpu, format_memory, parse_cpu, parse_memory


@pytest.mark.parametrize(
    ("text", "millicores"),
    [("24", 24_000), ("0.5", 500), ("500m", 500), ("1.5", 1_500), (2, 2_000), (" 8 ", 8_000)],
)
def test_parse_cpu(text, millicores):
    assert parse_cpu(text) == millicores


@pytest.mark.parametrize("text", ["", "abc", "-1", "1Gi", "1e3", "5 m"])
def test_parse_cpu_rejects_non_quantities(text):
    with pytest.raises(ValueError) as caught:
        parse_cpu(text)
    assert f"{text!r} is not a CPU quantity" in str(caught.value)
    assert "'500m'" in str(caught.value)


@pytest.mark.parametrize("text", ["0", "0m", "0.0001", "1.5m"])
def test_parse_cpu_rejects_zero_and_fractions_of_a_millicore(text):
    with pytest.raises(ValueError, match="positive whole number of millicores"):
        parse_cpu(text)


@pytest.mark.parametrize(
    ("text", "num_bytes"),
    [
        ("100Gi", 107_374_182_400),
        ("1Ki", 1_024),
        ("32Mi", 33_554_432),
        ("1Ti", 1_099_511_627_776),
        ("1.5Gi", 1_610_612_736),
        ("32G", 32_000_000_000),
        ("1k", 1_000),
        ("5M", 5_000_000),
        ("2T", 2_000_000_000_000),
        ("4096", 4_096),
        (128, 128),
    ],
)
def test_parse_memory(text, num_bytes):
    assert parse_memory(text) == num_bytes


@pytest.mark.parametrize("text", ["", "10GB", "1gi", "-1Gi", "Gi", "1 Gi", "1e9"])
def test_parse_memory_rejects_non_quantities(text):
    with pytest.raises(ValueError) as caught:
        parse_memory(text)
    message = str(caught.value)
    assert f"{text!r} is not a memory quantity" in message
    assert "Ki, Mi, Gi, Ti" in message


def test_parse_memory_rejects_zero():
    with pytest.raises(ValueError, match="must be more than zero"):
        parse_memory("0Gi")


def test_parse_memory_never_returns_zero():
    with contextlib.suppress(ValueError):  # rejecting it is fine too
        assert parse_memory("0.5") > 0


@pytest.mark.parametrize(("millicores", "text"), [(2_000, "2"), (500, "500m"), (63_770, "63770m")])
def test_format_cpu(millicores, text):
    assert format_cpu(millicores) == text


@pytest.mark.parametrize(
    ("num_bytes", "text"),
    [(107_374_182_400, "100Gi"), (1_610_612_736, "1536Mi"), (1_000, "1000")],
)
def test_format_memory(num_bytes, text):
    assert format_memory(num_bytes) == text


@pytest.mark.parametrize("text", ["100Gi", "512Mi", "3"])
def test_memory_round_trip(text):
    assert format_memory(parse_memory(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.5", "below one byte"),
        ("1.0001k", "whole number of bytes"),
        ("1.5", "whole number of bytes"),
        ("100m", "not a memory quantity"),  # millibytes: legal Kubernetes, never meant
        ("\u0661\u0660Gi", "not a memory quantity"),  # Arabic-Indic digits are not [0-9]
        ("1 Gi", "not a memory quantity"),
    ],
)
def test_parse_memory_refuses_fractions_of_bytes_and_foreign_forms(text, message):
    with pytest.raises(ValueError, match=message):
        parse_memory(text)


def test_booleans_are_not_quantities():
    with pytest.raises(ValueError):
        parse_cpu(True)
    with pytest.raises(ValueError):
        parse_memory(True)


@pytest.mark.parametrize(
    ("text", "expected"), [(" 8\n", "8"), ("\t500m ", "500m"), ("32Gi", "32Gi")]
)
def test_normalize_quantity_trims_whitespace(text, expected):
    from components.tpu.quantities import normalize_quantity

    assert normalize_quantity(text) == expected


def test_large_binary_suffixes():
    assert parse_memory("1Pi") == 2**50
    assert parse_memory("2E") == 2 * 10**18

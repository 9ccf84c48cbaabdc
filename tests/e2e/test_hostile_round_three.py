"""A fourth adversarial set, in the classes of issue 33 but beyond its cases and the research's
known answers: scalars read by Pulumi and the plan alike (a table, answers produced with
gopkg.in/yaml.v3 v3.0.1 through pulumi/pulumi v3.259's load path, written out), and generated
cases (hypothesis) of every class: no traceback, no hang, and no value the plan and the Pulumi
engine would read differently."""

from __future__ import annotations

import ipaddress
import json
import re
import string
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.errors import ConfigError
from components.resolve.checks import parse_stack_config
from components.resolve.stack_files import read_stack_file
from tests.helpers import deep_merge

LOAD_FAILS = "Pulumi cannot load the file"

# written unquoted: (what Pulumi passes for `tpu-pathways:k: <it>`, what the program reads for
# x in `tpu-pathways:k: {x: <it>}`; in that flow mapping a ',' ends the text, as to any YAML
# reader).
FRESH = [
    ("0x7FFFFFFFFFFFFFFF", "9223372036854775807", 9223372036854775807),
    ("0x8000000000000000", "9223372036854775808", 9223372036854776000),
    ("-0x8000000000000000", "-9223372036854775808", -9223372036854775808),
    (
        "0b" + "1" * 64,
        "18446744073709551615",
        18446744073709552000,
    ),
    ("0o1777777777777777777777", "18446744073709551615", 18446744073709552000),
    ("+0x10", "16", 16),
    ("-0b101", "-5", -5),
    ("0b-101", "-5", -5),
    ("0o-17", "-15", -15),
    ("1e-400", "0", 0),
    ("5e-324", "5e-324", 5e-324),
    ("4.9e-324", "5e-324", 5e-324),
    ("1.7976931348623157e308", "1.7976931348623157e+308", 1.7976931348623157e308),
    ("2e308", "2e308", "2e308"),
    ("-1e-7", "-1e-7", -1e-07),
    (".5e3", "500", 500),
    (".5e-3", "0.0005", 0.0005),
    ("1.e3", "1000", 1000),
    ("1.E+3", "1000", 1000),
    ("0.0000001", "1e-7", 1e-07),
    ("123456789.0", "123456789", 123456789),
    ("1234567.0", "1234567", 1234567),
    ("1e6", "1000000", 1000000),
    ("1e+06", "1000000", 1000000),
    ("0e0", "0", 0),
    ("-0e0", "0", 0),
    ("00.5", "0.5", 0.5),
    ("007", "7", 7),
    ("0009", "9", 9),
    ("2024-02-29", "2024-02-29 00:00:00 +0000 UTC", "2024-02-29 00:00:00 +0000 UTC"),
    ("2023-02-29", "2023-02-29", "2023-02-29"),
    ("0000-02-29", "0000-02-29 00:00:00 +0000 UTC", "0000-02-29 00:00:00 +0000 UTC"),
    (
        "2025-12-31 23:59:59.999",
        "2025-12-31 23:59:59.999 +0000 UTC",
        "2025-12-31 23:59:59.999 +0000 UTC",
    ),
    ("2025-1-1t0:0:0-24:00", "2025-01-01 00:00:00 -2400 -2400", "2025-01-01 00:00:00 -2400 -2400"),
    ("2025-1-1T0:0:0+25:00", "2025-01-01 00:00:00 +2500 +2500", "2025-01-01 00:00:00 +2500 +2500"),
    ("2025-1-1T24:0:0Z", "2025-1-1T24:0:0Z", "2025-1-1T24:0:0Z"),
    ("2025-01-01T00:00:00,5Z", "2025-01-01 00:00:00.5 +0000 UTC", "2025-01-01T00:00:00"),
    ("2025-01-01 00:00:00 Z", "2025-01-01 00:00:00 Z", "2025-01-01 00:00:00 Z"),
    ("20250101", "20250101", 20250101),
    ("2025-01", "2025-01", "2025-01"),
    ("+2025-01-01", "+2025-01-01", "+2025-01-01"),
    ("1_2_3", "123", 123),
    ("1__", "1", 1),
    ("_", "_", "_"),
    ("__1", "__1", "__1"),
    ("0x_1", "1", 1),
    ("0x1_", "1", 1),
    ("0b_1", "1", 1),
    ("+.inf", LOAD_FAILS, LOAD_FAILS),
    ("+.Inf", LOAD_FAILS, LOAD_FAILS),
    ("-.NaN", "-.NaN", "-.NaN"),
    (".nAn", ".nAn", ".nAn"),
    ("TrUe", "TrUe", "TrUe"),
    ("FALSE", "false", False),
    ("False", "false", False),
    ("fAlse", "fAlse", "fAlse"),
    ("NuLL", "NuLL", "NuLL"),
    ("~~", "~~", "~~"),
    ("y n", "y n", "y n"),
    ("yes no", "yes no", "yes no"),
    ("ON OFF", "ON OFF", "ON OFF"),
    ("1 2", "1 2", "1 2"),
    ("0x 10", "0x 10", "0x 10"),
    ("1,000", "1,000", 1),
    ("1.000,5", "1.000,5", 1),
    ("١٢٣", "١٢٣", "١٢٣"),
    ("\uff11\uff12\uff13", "\uff11\uff12\uff13", "\uff11\uff12\uff13"),  # fullwidth 123
    ("½", "½", "½"),
    ("Ⅻ", "Ⅻ", "Ⅻ"),
    ("1e1_0", "10000000000", 10000000000),
    ("1_e10", "10000000000", 10000000000),
    ("12e-", "12e-", "12e-"),
    ("e5", "e5", "e5"),
    ("0.e1", "0", 0),
    ("-.e1", "-.e1", "-.e1"),
    ("+-1", "+-1", "+-1"),
    ("--1", "--1", "--1"),
    ("0x-1", "0x-1", "0x-1"),
    ("1:2:3", "1:2:3", "1:2:3"),
    ("-1:30", "-1:30", "-1:30"),
    ("190:20:30", "190:20:30", "190:20:30"),
    ("1:60", "1:60", "1:60"),
    ("1:30.5", "1:30.5", "1:30.5"),
    ("0:0", "0:0", "0:0"),
    ("TRUEyes59.NULL", "TRUEyes59.NULL", "TRUEyes59.NULL"),
    ("3020250BNo", "3020250BNo", "3020250BNo"),
    ("n01", "n01", "n01"),
    ("01.nan", "01.nan", "01.nan"),
    ("0B81ea", "0B81ea", "0B81ea"),
    ("2025-1-5on", "2025-1-5on", "2025-1-5on"),
    ("0b0X", "0b0X", "0b0X"),
    ("e-e-", "e-e-", "e-e-"),
    ("a b on 1e31.0", "a b on 1e31.0", "a b on 1e31.0"),
    ("01G0o9223372036854775808", "01G0o9223372036854775808", "01G0o9223372036854775808"),
    ("1.0 !1:30 ~", "1.0 !1:30 ~", "1.0 !1:30 ~"),
]

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,  # the same cases in every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _read(tmp_path: Path, text: str) -> dict[str, str] | None:
    """The stack file's engine config, or None if the plan refuses it (never another error)."""
    directory = tmp_path / str(len(list(tmp_path.iterdir())))
    directory.mkdir()
    (directory / "Pulumi.k.yaml").write_text(text, encoding="utf-8")
    try:
        return read_stack_file("k", directory)
    except ConfigError:
        return None


@pytest.mark.parametrize(("written", "top", "nested"), FRESH, ids=[r[0] for r in FRESH])
def test_a_scalar_the_plan_reads_is_what_pulumi_passes(written, top, nested, tmp_path):
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {written}\n")
    if raw is not None:
        assert raw["tpu-pathways:k"] == top
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {{x: {written}}}\n")
    if raw is not None:
        value = json.loads(raw["tpu-pathways:k"])["x"]
        assert value == nested and type(value) is type(nested)


def test_the_fresh_table_is_not_all_refusals(tmp_path):
    read = [w for w, _, _ in FRESH if _read(tmp_path, f"config:\n  tpu-pathways:k: {w}\n")]
    assert len(read) >= 40


# --- generated scalars ---------------------------------------------------------------------
_PLAIN = st.text(alphabet="0123456789+-._:eExXoObBtTrRuUfFaAlLsSnNyY~ ", min_size=1, max_size=12)


@SETTINGS
@given(text=_PLAIN)
def test_a_top_level_value_is_read_only_as_written(text, tmp_path):
    """Pulumi hands a top-level value over as text: the plan passes exactly what the file says
    (as YAML composes it), or refuses."""
    document = f"config:\n  tpu-pathways:k: {text}\n"
    raw = _read(tmp_path, document)
    if raw is not None:
        node = yaml.compose(document).value[0][1].value[0][1]
        assert raw["tpu-pathways:k"] == node.value


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar: printable ASCII as is, everything else escaped (\\U)."""
    kept = (c if " " <= c <= "~" and c not in '"\\' else f"\\U{ord(c):08x}" for c in text)
    return '"' + "".join(kept) + '"'


@SETTINGS
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_quoting_any_text_reads_it_as_written(text, tmp_path):
    """The fix every refusal names, quoting, always works: at the top and inside a value."""
    quoted = _double_quoted(text)
    document = f"config:\n  tpu-pathways:k: {quoted}\n  tpu-pathways:j: {{x: {quoted}}}\n"
    raw = _read(tmp_path, document)
    assert raw is not None
    assert raw["tpu-pathways:k"] == text
    assert json.loads(raw["tpu-pathways:j"]) == {"x": text}


_TOKENS = st.sampled_from(
    [
        "a", "1", "0x1F", "1e3", "on", "~", ":", ": ", "-", "- ", "?", "[", "]", "{", "}", ",",
        "&a ", "*a", "!!str ", "!!int ", "!!binary ", "<<: ", '"q"', "'s'", "|", "\n", "\n  ",
        "\n    ", "#", "2025-1-5", ".inf", "\t", "tpu-pathways:", "config:", "%", "\\", "é",
    ]
)  # fmt: skip


@SETTINGS
@given(tokens=st.lists(_TOKENS, max_size=25))
def test_any_document_reads_or_is_refused_never_a_traceback(tokens, tmp_path):
    _read(tmp_path, "config:\n  tpu-pathways:k: " + "".join(tokens) + "\n")


# --- keys ----------------------------------------------------------------------------------
_NAME = st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=1, max_size=12)


@SETTINGS
@given(name=_NAME.filter(lambda n: not re.fullmatch(r"[0-9._+-]+|true|false|null", n, re.I)))
def test_a_bare_key_is_the_projects_and_its_twin_is_refused(name, tmp_path):
    bare = _read(tmp_path, f"config:\n  {name}: v\n")
    namespaced = _read(tmp_path, f"config:\n  tpu-pathways:{name}: v\n")
    assert bare == namespaced
    assert _read(tmp_path, f"config:\n  {name}: v\n  tpu-pathways:{name}: w\n") is None


@SETTINGS
@given(parts=st.lists(_NAME, min_size=3, max_size=4))
def test_a_key_with_two_or_more_colons_is_refused(parts, tmp_path):
    assert _read(tmp_path, f"config:\n  {':'.join(parts)}: v\n") is None


# --- numbers past the fields they reach ----------------------------------------------------
BASE = {
    "environment": "dev",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    "tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4"}],
    "teams": [{"name": "a"}],
}
_NUMBER_FIELDS = [
    ({"addons": {"kueue": {"tpuQuota": None}}}, "addons.kueue.tpuQuota"),
    (
        {"addons": {"kueue": {"teamQuotas": [{"team": "a", "chips": {}, "borrowingLimit": None}]}}},
        "addons.kueue.teamQuotas[0].borrowingLimit",
    ),
    ({"cpuPool": {"maxNodes": None}}, "cpuPool.maxNodes"),
    ({"tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": None}]},
     "tpuPools[0].slices"),
    ({"teams": [{"name": "a", "resourceQuota": {"pods": None}}]}, "teams[0].resourceQuota.pods"),
    ({"scratchBucket": {"retentionDays": None}}, "scratchBucket.retentionDays"),
]  # fmt: skip


def _with_number(overrides: dict, number: int) -> dict:
    text = json.dumps(overrides).replace("null", str(number))
    return deep_merge(BASE, json.loads(text))


@SETTINGS
@given(field=st.sampled_from(_NUMBER_FIELDS), number=st.integers(min_value=2**31, max_value=2**80))
def test_a_number_past_int32_is_refused_at_its_key(field, number):
    overrides, key = field
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(_with_number(overrides, number), "test")
    assert key in {issue.key for issue in caught.value.issues}


# --- authorized networks: what a range admits, however it is written -----------------------
def _spellings(network: ipaddress.IPv4Network) -> list[str]:
    address, bits = int(network.network_address), network.prefixlen
    six_to_four = ipaddress.IPv6Network(((0x2002 << 112) | (address << 80), 16 + bits))
    return [
        str(network),
        f"::ffff:{network.network_address}/{96 + bits}",
        f"::{network.network_address}/{96 + bits}",
        f"64:ff9b::{network.network_address}/{96 + bits}",
        str(six_to_four),
    ]


@SETTINGS
@given(
    address=st.integers(min_value=0, max_value=2**32 - 1),
    bits=st.integers(min_value=0, max_value=32),
    other=st.sampled_from(["10.0.0.0/8", "128.0.0.0/1", "192.168.0.0/16"]),
)
def test_every_spelling_of_an_ipv4_range_is_judged_as_the_range(address, bits, other):
    from components.config.address_sets import everywhere, exposure

    network = ipaddress.IPv4Network((address, bits), strict=False)
    verdicts = {
        (everywhere(spelled) is None, exposure([spelled, other]) is None)
        for spelled in _spellings(network)
    }
    assert len(verdicts) == 1, (network, verdicts)


# --- credentials in flags ------------------------------------------------------------------
SENTINEL = "zq-s3cr3t-9"
_CREDENTIAL = st.sampled_from(["hf_token", "api-key", "API_KEY", "password", "db-secret", "token"])


@SETTINGS
@given(
    name=_CREDENTIAL,
    dashes=st.sampled_from(["-", "--"]),
    form=st.sampled_from(["=", " ", "next"]),
    value=st.text(
        alphabet=string.ascii_letters + string.digits + "$()-_/", min_size=1, max_size=20
    ),
)
def test_a_credential_flag_never_keeps_a_plain_value(name, dashes, form, value):
    value = SENTINEL + value
    flags = [f"{dashes}{name}", value] if form == "next" else [f"{dashes}{name}{form}{value}"]
    component = {"type": "worker", "flags": flags}
    job = {"name": "w", "pool": "v5e", "mode": "headless", "customComponents": [component]}
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(deep_merge(BASE, {"workloads": [job]}), "test")
    keys = {issue.key for issue in caught.value.issues}
    assert any(k.startswith("workloads[0].customComponents[0].flags[") for k in keys)
    assert SENTINEL not in str(caught.value)

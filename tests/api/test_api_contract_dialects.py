"""The contract's patterns read the same in every ecosystem: ECMA-262 with the ``u``
flag (JavaScript, TypeScript, Spectral, JSON Schema validators outside Python) and
Python's ``re`` (openapi-core), and they are the ones made from the server's check."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess

import pytest

from tests.api.test_api_contract import spec
from tools.name_pattern import name_pattern, whitespace_class

#: the name-like schemas and the lengths their patterns allow
NAME_SCHEMAS = {"Name": 100, "Player": 32, "Reason": 500}
#: each character is tried alone, inside a name and at either end (where white space is trimmed)
FORMS = ("a{}b", "{}", "{}a", "a{}")

#: every code point, tried in each form, one bit each: the bitmap base64-encoded on stdout
NODE_SCRIPT = r"""
const re = new RegExp(process.argv[1], "u");
const forms = JSON.parse(process.argv[2]);
const bits = new Uint8Array(Math.ceil(0x110000 * forms.length / 8));
let i = 0;
for (let point = 0; point < 0x110000; point++) {
  const c = String.fromCodePoint(point);
  for (const form of forms) {
    if (re.test(form.replace("{}", c))) bits[i >> 3] |= 1 << (i & 7);
    i++;
  }
}
process.stdout.write(Buffer.from(bits).toString("base64"));
"""


@pytest.mark.parametrize(("schema", "length"), NAME_SCHEMAS.items())
def test_the_name_patterns_are_made_from_the_servers_check(schema, length):
    assert spec()["components"]["schemas"][schema]["pattern"] == name_pattern(length)


def test_a_code_may_have_the_white_space_around_it_that_the_server_trims():
    pattern = spec()["components"]["schemas"]["CodeInput"]["pattern"]
    assert pattern.startswith(f"^{whitespace_class()}*(") and pattern.endswith(f"{whitespace_class()}*$")


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is needed to check the contract's patterns in ECMA-262")
        pytest.skip("no node on this machine")
    return found


@pytest.mark.slow
def test_javascript_and_python_read_the_name_pattern_alike():
    """Every code point, in every form: ``new RegExp(pattern, "u")`` and ``re.search`` agree.
    (Python's answer is the server's: test_api_hardening checks that for every assigned character.)"""
    pattern = spec()["components"]["schemas"]["Player"]["pattern"]
    done = subprocess.run([node(), "-e", NODE_SCRIPT, pattern, str(list(FORMS)).replace("'", '"')],
                          capture_output=True, text=True, timeout=300, check=True)
    bits = base64.b64decode(done.stdout)
    compiled = re.compile(pattern)
    differ = []
    for point in range(0x110000):
        char = chr(point)
        for k, form in enumerate(FORMS):
            i = point * len(FORMS) + k
            if bool(bits[i >> 3] >> (i & 7) & 1) != bool(compiled.search(form.replace("{}", char))):
                differ.append((f"U+{point:04X}", form))
    assert not differ, differ[:20]


def test_the_contract_has_no_python_only_regex():
    """No ``\\U``, ``\\Z``, ``\\A``, ``(?P<``, inline flags or possessive forms: ECMA-262 has none of them."""
    text = str(spec())
    for construct in (r"\\U", r"\\Z", r"\\A", "(?P<", "(?i)", "(?s)", "*+", "++"):
        assert construct not in text, construct
    for name, schema in spec()["components"]["schemas"].items():
        if "pattern" in schema:
            re.compile(schema["pattern"])  # and Python reads it
            assert r"\s" not in schema["pattern"] and r"\S" not in schema["pattern"], name

"""Kafka's ``sasl.jaas.config`` grammar (``JaasConfig``, built on Java's ``StreamTokenizer``).

    <loginModuleClass> <flag> { <option>=<value> } ;     (repeated; Kafka clients accept exactly one)

``flag`` is required/requisite/sufficient/optional (any case); values are bare words or
double-quoted strings (``\\"`` and ``\\\\`` escapes); ``//`` and ``/* */`` comments are skipped.
Errors never quote option values: this text carries passwords.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from metashell.live.errors import ConfigError

FLAGS = ("required", "requisite", "sufficient", "optional")


@dataclass(frozen=True)
class LoginModule:
    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict, repr=False)  # repr=False: passwords

    def __repr__(self) -> str:
        return f"LoginModule({self.name!r}, {self.flag!r}, options={sorted(self.options)})"


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) with kind word/quoted/punct; comments dropped."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ConfigError("sasl.jaas.config: unterminated /* comment")
            i = j + 2
        elif c == '"':
            buf: list[str] = []
            i += 1
            while True:
                if i >= n:
                    raise ConfigError("sasl.jaas.config: unterminated quoted value")
                ch = text[i]
                if ch == "\\" and i + 1 < n:
                    buf.append(text[i + 1])
                    i += 2
                    continue
                i += 1
                if ch == '"':
                    break
                buf.append(ch)
            out.append(("quoted", "".join(buf)))
        elif c in "=;{}":
            out.append(("punct", c))
            i += 1
        else:
            j = i
            while (
                j < n
                and not text[j].isspace()
                and text[j] not in '=;"{}'
                and not text.startswith("//", j)
                and not text.startswith("/*", j)
            ):
                j += 1
            out.append(("word", text[i:j]))
            i = j
    return out


def parse_jaas_config(text: str) -> list[LoginModule]:
    """All login modules in ``text`` (raises ConfigError naming the problem, never a value)."""
    toks = _tokens(text)
    modules: list[LoginModule] = []
    i = 0

    def want(kinds: tuple[str, ...], what: str) -> str:
        nonlocal i
        if i >= len(toks) or toks[i][0] not in kinds:
            got = (
                "end of text"
                if i >= len(toks)
                else (f"'{toks[i][1]}'" if toks[i][0] == "punct" else "a value")
            )
            raise ConfigError(f"sasl.jaas.config: expected {what}, found {got}")
        i += 1
        return toks[i - 1][1]

    while i < len(toks):
        name = want(("word",), "a login module class name")
        flag = want(("word",), "a control flag (required, requisite, sufficient, optional)")
        if flag.lower() not in FLAGS:
            raise ConfigError(f"sasl.jaas.config: invalid control flag '{flag}' for {name}")
        options: dict[str, str] = {}
        while i < len(toks) and toks[i] != ("punct", ";"):
            key = want(("word",), "an option name or ';'")
            if i >= len(toks) or toks[i] != ("punct", "="):
                raise ConfigError(f"sasl.jaas.config: expected '=' after option {key}")
            i += 1
            options[key] = want(("word", "quoted"), f"a value for option {key}")
        if i >= len(toks):
            raise ConfigError(f"sasl.jaas.config: login module {name} is not terminated by ';'")
        i += 1
        modules.append(LoginModule(name, flag.lower(), options))
    if not modules:
        raise ConfigError("sasl.jaas.config is empty")
    return modules

"""Xacro expansion without code execution, and with limits on time and size.

The ``xacro`` package evaluates ``${...}`` and ``$(eval ...)`` with Python's ``eval``; its guards (no
names with ``__``, no builtins) are known to be bypassable, so a description downloaded from the internet
could run code on the machine that opens it. While ``urdf_dyn`` expands a file, ``expansion`` replaces
xacro's two entry points (``xacro.safe_eval`` for ``${...}``, ``substitution_args._eval`` for
``$(eval ...)``) by ``safe_eval`` below, an interpreter of Python's expression AST that allows only:

- literals (numbers, strings, lists, tuples, dicts), arithmetic, comparisons, ``and``/``or``/``not``,
  ``x if c else y``, indexing and slicing;
- xacro properties and arguments (names), and the attributes of xacro namespaces and YAML dictionaries;
- calls of the functions in ``ALLOWED_FUNCTIONS`` (``math``, a few builtins such as ``min``, ``max``,
  ``int``, ``str``, ``len``; xacro's ``arg``, ``load_yaml``, ``dotify``, ``fatal``; ``$(eval)``'s ``arg``,
  ``find``, ``dirname``) and of a few string/dict methods (``STR_METHODS``, ``DICT_METHODS``).

Everything else — attributes starting with ``_``, ``import``, lambdas, comprehensions, calls of any other
callable, string literals whose escape sequences spell ``__`` — is refused with ``XacroSafetyError``
naming the expression. Values are bounded (strings and lists of at most ``MAX_LEN`` items, integers of
at most ``MAX_INT_BITS`` bits, ``%`` format widths), and the whole expansion is bounded in time
(``time_limit`` s), in the number of elements processed (``max_nodes``), in macro nesting
(``max_depth``: a recursive macro without an end) and in the text produced (``max_bytes``).

``trust=True`` (``urdf_dyn.load(..., trust_xacro=True)``, ``urdf-dyn --trust-xacro``) restores xacro's
own Python evaluation — which RUNS ARBITRARY CODE from the file; the limits stay.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import math
import operator
import os
import re
import time

__all__ = ["trusting", "trusted", "XacroSafetyError", "XacroLimitError", "safe_eval", "expansion", "ALLOWED_FUNCTIONS",
           "STR_METHODS", "DICT_METHODS", "MAX_LEN", "MAX_INT_BITS"]

MAX_LEN = 1_000_000          # characters of a string, items of a list/tuple built by an expression
MAX_INT_BITS = 100_000       # bits of an integer an expression may build
STR_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "startswith",
                         "endswith", "replace", "join", "find", "count", "isdigit", "title", "capitalize"})
DICT_METHODS = frozenset({"get", "keys", "values", "items"})
LIST_METHODS = frozenset({"index", "count"})
_SAFE_BUILTINS = ("abs", "min", "max", "round", "int", "float", "str", "bool", "len", "sum", "sorted",
                  "range", "list", "tuple", "dict", "zip", "enumerate", "reversed", "all", "any", "divmod")
_XACRO_FUNCS = ("arg", "load_yaml", "dotify", "fatal", "tokenize", "abs_filename", "message", "warning",
                "error", "print_location")


_TRUSTED = contextvars.ContextVar("urdf_dyn_trust_xacro", default=False)


@contextlib.contextmanager
def trusting(trust=True):
    """Within this block, xacro files loaded without an explicit ``trust_xacro`` are expanded by xacro's
    own Python evaluation (RUNS CODE): what ``urdf-dyn --trust-xacro launch ...`` uses for launch files."""
    token = _TRUSTED.set(bool(trust))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def trusted() -> bool:
    """True inside ``trusting()``."""
    return _TRUSTED.get()


class XacroSafetyError(Exception):
    """An expression uses something the restricted evaluator does not allow (it would run code)."""


class XacroLimitError(Exception):
    """The expansion exceeded a limit on time, size or macro nesting (a xacro 'bomb')."""


def _functions():
    """{name: callable} the evaluator may call: math's functions and a few builtins; identities matter."""
    import builtins
    out = {k: v for k, v in vars(math).items() if not k.startswith("_") and callable(v)}
    out.update({k: getattr(builtins, k) for k in _SAFE_BUILTINS})
    return out


ALLOWED_FUNCTIONS = _functions()
_BUILTIN_NAMES = frozenset(dir(__import__("builtins"))) - set(ALLOWED_FUNCTIONS)
_ALLOWED_IDS = {id(f) for f in ALLOWED_FUNCTIONS.values()}
_MATH_CONSTANTS = {k: v for k, v in vars(math).items() if isinstance(v, float)}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_UNOPS = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_, ast.Invert: operator.invert}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_FORMAT_WIDTH = re.compile(r"%[-+ #0]*(\*|\d{5,})|%[-+ #0]*\d*\.(\*|\d{5,})")


class _Method:
    """A whitelisted method of a str/dict/list value, bound to it."""
    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f


def _size(v):
    return len(v) if isinstance(v, (str, bytes, list, tuple, dict)) else 0


def _check_value(v, expr):
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v.bit_length() > MAX_INT_BITS:
        raise XacroLimitError(f"${{{expr}}}: an integer of {v.bit_length()} bits exceeds the limit of "
                              f"{MAX_INT_BITS} bits")
    if _size(v) > MAX_LEN:
        raise XacroLimitError(f"${{{expr}}}: a value of {_size(v)} items exceeds the limit of {MAX_LEN}")
    return v


def _binop(op, a, b, expr):
    if op is ast.Pow and isinstance(a, int) and isinstance(b, int) and b > 0:
        if b * max(abs(a).bit_length(), 1) > MAX_INT_BITS * 2 and abs(a) > 1:
            raise XacroLimitError(f"${{{expr}}}: {a} ** {b} is too large (limit {MAX_INT_BITS} bits)")
    if op is ast.LShift and isinstance(b, int) and b > MAX_INT_BITS:
        raise XacroLimitError(f"${{{expr}}}: shift by {b} bits exceeds the limit of {MAX_INT_BITS}")
    if op is ast.Mult:
        for s, n in ((a, b), (b, a)):
            if _size(s) and isinstance(n, int) and not isinstance(s, dict) and _size(s) * n > MAX_LEN:
                raise XacroLimitError(f"${{{expr}}}: repeating {_size(s)} items {n} times exceeds the limit of "
                                      f"{MAX_LEN}")
    if op is ast.Add and _size(a) + _size(b) > MAX_LEN:
        raise XacroLimitError(f"${{{expr}}}: a value of {_size(a) + _size(b)} items exceeds the limit of {MAX_LEN}")
    if op is ast.Mod and isinstance(a, str) and _FORMAT_WIDTH.search(a):
        raise XacroSafetyError(f"${{{expr}}}: '%' format widths of 10000 and more (or '*') are refused")
    return _check_value(_BINOPS[op](a, b), expr)


class _Evaluator:
    def __init__(self, expr, names, extra_functions=()):
        self.expr, self.names = expr, names
        self.extra = extra_functions if isinstance(extra_functions, frozenset) else \
            frozenset(id(f) for f in extra_functions)

    def refuse(self, what):
        raise XacroSafetyError(f"${{{self.expr}}}: {what} is not allowed (only arithmetic, comparisons, math "
                               "functions and xacro properties; trust_xacro=True / --trust-xacro runs the file's "
                               "Python, which can run any code)")

    def run(self, node):
        m = getattr(self, "_" + type(node).__name__, None)
        if m is None:
            self.refuse(f"'{type(node).__name__}' ({ast.get_source_segment(self.expr, node) or '...'})")
        return m(node)

    def _Expression(self, n):
        return self.run(n.body)

    def _Constant(self, n):
        v = n.value
        if isinstance(v, str) and "__" in v:
            src = ast.get_source_segment(self.expr, n) or ""
            if "__" not in src:
                self.refuse(f"a string whose escape sequences spell '__' ({src})")
        return _check_value(v, self.expr)

    def _Name(self, n):
        if n.id.startswith("_"):
            self.refuse(f"the name {n.id!r}")
        try:
            return self.names[n.id]
        except KeyError:
            if n.id in _MATH_CONSTANTS:
                return _MATH_CONSTANTS[n.id]
            if n.id in _BUILTIN_NAMES or n.id == "import":
                self.refuse(f"the builtin {n.id!r}")
            raise NameError(f"name {n.id!r} is not defined") from None

    def _Attribute(self, n):
        if n.attr.startswith("_"):
            self.refuse(f"the attribute {n.attr!r}")
        obj = self.run(n.value)
        if isinstance(obj, str) and n.attr in STR_METHODS:
            return _Method(getattr(obj, n.attr))
        if isinstance(obj, list) and n.attr in LIST_METHODS:
            return _Method(getattr(obj, n.attr))
        if isinstance(obj, dict):
            if n.attr in obj:
                return obj[n.attr]
            if n.attr in DICT_METHODS:
                return _Method(getattr(obj, n.attr))
            try:  # xacro's NameSpace / YamlDictWrapper resolve items as attributes
                return getattr(obj, n.attr)
            except (AttributeError, KeyError):
                raise NameError(f"{n.attr!r} is not defined in this namespace") from None
        self.refuse(f"the attribute {n.attr!r} of a {type(obj).__name__}")

    def _Subscript(self, n):
        obj = self.run(n.value)
        key = self.run(n.slice)
        if not isinstance(obj, (str, list, tuple, dict)):
            self.refuse(f"indexing a {type(obj).__name__}")
        return obj[key]

    def _Slice(self, n):
        return slice(*(None if x is None else self.run(x) for x in (n.lower, n.upper, n.step)))

    def _List(self, n):
        return _check_value([self.run(e) for e in n.elts], self.expr)

    def _Tuple(self, n):
        return _check_value(tuple(self.run(e) for e in n.elts), self.expr)

    def _Dict(self, n):
        if any(k is None for k in n.keys):
            self.refuse("'**' in a dict")
        return {self.run(k): self.run(v) for k, v in zip(n.keys, n.values)}

    def _BinOp(self, n):
        return _binop(type(n.op), self.run(n.left), self.run(n.right), self.expr)

    def _UnaryOp(self, n):
        return _UNOPS[type(n.op)](self.run(n.operand))

    def _BoolOp(self, n):
        v = None
        for e in n.values:
            v = self.run(e)
            if isinstance(n.op, ast.And) and not v or isinstance(n.op, ast.Or) and v:
                return v
        return v

    def _Compare(self, n):
        left = self.run(n.left)
        for op, c in zip(n.ops, n.comparators):
            right = self.run(c)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, n):
        return self.run(n.body) if self.run(n.test) else self.run(n.orelse)

    def _Call(self, n):
        f = self.run(n.func)
        if any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords):
            self.refuse("'*' or '**' arguments")
        args = [self.run(a) for a in n.args]
        kwargs = {k.arg: self.run(k.value) for k in n.keywords}
        if isinstance(f, _Method):
            return _check_value(f.f(*args, **kwargs), self.expr)
        if not callable(f) or (id(f) not in _ALLOWED_IDS and id(f) not in self.extra
                               and id(getattr(f, "_xacro_safe_original", None)) not in _ALLOWED_IDS):
            self.refuse(f"calling {ast.get_source_segment(self.expr, n.func)!r}")
        if any(isinstance(a, range) and len(a) > MAX_LEN for a in args):
            raise XacroLimitError(f"${{{self.expr}}}: a range of more than {MAX_LEN} items")
        v = f(*args, **kwargs)
        if isinstance(v, range) and len(v) > MAX_LEN:
            raise XacroLimitError(f"${{{self.expr}}}: a range of more than {MAX_LEN} items")
        return _check_value(v, self.expr)


def safe_eval(expr, names, extra_functions=()):
    """Evaluate the Python expression ``expr`` with the restricted evaluator (module docstring).

    ``names``: a mapping of the names it may read (xacro's symbol table); ``extra_functions``: callables
    beyond ``ALLOWED_FUNCTIONS`` it may call. Raises XacroSafetyError for anything not allowed,
    XacroLimitError for a value over the limits, and the usual Python errors (NameError, TypeError,
    ZeroDivisionError, ...) of the expression itself."""
    expr = str(expr).strip()
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise XacroSafetyError(f"${{{expr}}}: not a valid expression ({e.msg})") from None
    return _Evaluator(expr, names, extra_functions).run(tree)


class _Budget:
    def __init__(self, time_limit, max_nodes, max_depth, max_bytes):
        self.t0 = time.monotonic()
        self.time_limit, self.max_nodes, self.max_depth, self.max_bytes = time_limit, max_nodes, max_depth, max_bytes
        self.nodes = self.bytes = self.depth = 0
        self.macros = []

    def node(self):
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise XacroLimitError(f"the expansion processed more than {self.max_nodes} elements (a macro that "
                                  "multiplies elements?)")
        if time.monotonic() - self.t0 > self.time_limit:
            raise XacroLimitError(f"the expansion took longer than {self.time_limit:g} s")

    def text(self, v):
        self.bytes += len(v) if isinstance(v, str) else 16
        if self.bytes > self.max_bytes:
            raise XacroLimitError(f"the expansion produced more than {self.max_bytes >> 20} MiB of text (a macro "
                                  "that doubles a string?)")


@contextlib.contextmanager
def expansion(trust=False, time_limit=10.0, max_nodes=10_000, max_depth=60, max_bytes=64 << 20):
    """While active, xacro evaluates with ``safe_eval`` (unless ``trust``) under the limits: ``time_limit``
    [s], ``max_nodes`` elements processed, ``max_depth`` nested macro calls, ``max_bytes`` of evaluated
    text. Not re-entrant: the caller holds a lock (xacro keeps module-level state)."""
    import xacro
    from xacro import substitution_args as sa

    b = _Budget(time_limit, max_nodes, max_depth, max_bytes)
    saved = {k: getattr(xacro, k) for k in ("safe_eval", "eval_all", "eval_text", "handle_macro_call", "parse",
                                            "load_yaml")}
    saved_sa = sa._eval
    orig_eval_all, orig_eval_text, orig_macro = saved["eval_all"], saved["eval_text"], saved["handle_macro_call"]

    def eval_all(node, macros, symbols):
        b.node()
        return orig_eval_all(node, macros, symbols)

    def eval_text(text, symbols):
        v = orig_eval_text(text, symbols)
        b.text(v)
        return v

    def handle_macro_call(node, macros, symbols):
        tag = getattr(node, "tagName", "")
        is_macro = tag.startswith("xacro:") and tag not in _XACRO_TAGS
        if is_macro:
            b.depth += 1
            b.macros.append(tag)
            if b.depth > b.max_depth:
                chain = " -> ".join(dict.fromkeys(b.macros))
                raise XacroLimitError(f"macro calls nest deeper than {b.max_depth} ({chain}): a recursive macro "
                                      "needs an end condition (xacro:if) that it reaches")
        try:
            return orig_macro(node, macros, symbols)
        finally:
            if is_macro:
                b.depth -= 1
                b.macros.pop()

    orig_parse, orig_load_yaml = saved["parse"], saved["load_yaml"]

    def parse(inp, filename=None):
        if inp is None and filename is not None:
            _check_file(os.path.join(xacro.root_dir, filename), max_bytes)
        return orig_parse(inp, filename)

    def load_yaml(filename):
        _check_file(xacro.abs_filename_spec(filename), max_bytes)
        return orig_load_yaml(filename)

    xacro.eval_all, xacro.eval_text, xacro.handle_macro_call = eval_all, eval_text, handle_macro_call
    xacro.parse, xacro.load_yaml = parse, load_yaml
    gs = xacro._global_symbols
    saved_gs = [(d, k, d[k]) for d in (gs, gs.get("xacro", {})) for k in ("load_yaml",) if k in d]
    for d, k, _ in saved_gs:
        dict.__setitem__(d, k, load_yaml)
    if not trust:
        xacro_functions = _xacro_namespace_functions(xacro._global_symbols)

        def xacro_eval(expr, globals, locals=None):
            return safe_eval(expr, globals, xacro_functions)

        def sa_eval(s, context):
            args = context.setdefault("arg", {})

            def arg(name):
                return sa.convert_value(sa._eval_arg(name, args=args), "auto")

            def dirname():
                return sa._eval_dirname(context.get("filename"))

            find = sa._eval_dict.get("find", sa._eval_find)
            names = _ArgNames(args, {"arg": arg, "dirname": dirname, "find": find, "true": True,
                                     "false": False, "True": True, "False": False, **ALLOWED_FUNCTIONS,
                                     **_MATH_CONSTANTS})
            return str(safe_eval(s, names, (arg, dirname, find)))

        xacro.safe_eval, sa._eval = xacro_eval, sa_eval
    try:
        yield b
    finally:
        for k, v in saved.items():
            setattr(xacro, k, v)
        sa._eval = saved_sa
        for d, k, v in saved_gs:
            dict.__setitem__(d, k, v)


def _check_file(path, max_bytes):
    """An included file must be a regular file of at most ``max_bytes`` (not /dev/zero, a FIFO, ...)."""
    if os.path.exists(path) and (not os.path.isfile(path) or os.path.getsize(path) > max_bytes):
        raise XacroLimitError(f"{path}: included files must be regular files of at most {max_bytes >> 20} MiB")


_XACRO_TAGS = frozenset(f"xacro:{t}" for t in ("macro", "property", "include", "if", "unless", "arg", "element",
                                                "attribute", "insert_block", "call"))


class _ArgNames(dict):
    """$(eval)'s names: the functions, then the xacro arguments (converted as xacro does)."""

    def __init__(self, args, functions):
        super().__init__(functions)
        self.args = args

    def __missing__(self, key):
        from xacro import substitution_args as sa
        return sa.convert_value(self.args[key], "auto")


def _xacro_namespace_functions(symbols):
    """ids of the callables of xacro's own namespace (``xacro.arg``, ``xacro.load_yaml``, ...) and the deprecated
    top-level aliases of ``python.*`` builtins, found in xacro's global symbol table."""
    import xacro
    root = symbols
    out = []
    ns = root.get("xacro") if hasattr(root, "get") else None
    if ns is not None:
        out += [ns[k] for k in _XACRO_FUNCS if k in ns]
    out += [root[k] for k in _XACRO_FUNCS + _SAFE_BUILTINS if k in root and callable(root[k])]
    py = root.get("python") if hasattr(root, "get") else None
    if py is not None:
        out += [py[k] for k in _SAFE_BUILTINS if k in py]
    return frozenset(id(f) for f in out)

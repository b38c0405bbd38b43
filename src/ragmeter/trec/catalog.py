"""trec_eval 10.0's measure table (``measures.c``) and its ``-m`` options, without numpy.

Every measure trec_eval 10.0 has, in the order it computes and prints them, with the kind of
value it prints (a float, a count summed over topics, a geometric mean, the run id, the number
of topics, a string), the parameters it takes (``meas_init.c``: cut-offs, a list of numbers,
``level=gain`` pairs, none) and their defaults, and the rel_info format it needs (``-R``):
``qrels`` (``form_res_rels.c``), ``prefs`` (``-R prefs`` and ``-R qrels_prefs``,
``form_prefs_counts.c``) or ``qrels_jg`` (``form_res_rels_jg.c``). Its nicknames
(``official``, ``all_trec``, ``set``, ``all_prefs``, ``prefs``, ``qrels_jg``) expand as there.

>>> [r.names for r in parse_requests(["P.10,5", "ndcg.1=3", "utility"])]
[['P_5', 'P_10'], ['utility'], ['ndcg_1=3']]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragmeter.trec.errors import EXIT_FILE, EXIT_TOPIC, TrecMeasureError

STANDARD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(i / 10 for i in range(11))
R_MULTIPLES = tuple(i / 5 for i in range(1, 11))


@dataclass(frozen=True)
class Spec:
    """One trec_eval measure: name, printed kind, parameter style and default, rel_info format."""

    name: str
    kind: str  # float | count | gm | runid | num_q | relstring
    params: str = "none"  # none | int_cuts | float_cuts | float_list | pairs
    default: tuple = ()
    needs: str = "qrels"  # the -R format it is computed from: qrels | prefs | qrels_jg | any


_PREFS_COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
_PREFS_RATIOS = ("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                 "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                 "prefs_pair_imp", "prefs_avgjg_imp")

SPECS: dict[str, Spec] = {s.name: s for s in [
    Spec("runid", "runid", needs="any"),
    Spec("num_q", "num_q", needs="any"),
    Spec("num_ret", "count"),
    Spec("num_rel", "count"),
    Spec("num_rel_ret", "count"),
    Spec("map", "float"),
    Spec("gm_map", "gm"),
    Spec("Rprec", "float"),
    Spec("bpref", "float"),
    Spec("recip_rank", "float"),
    Spec("iprec_at_recall", "float", "float_cuts", RECALL_LEVELS),
    Spec("P", "float", "int_cuts", STANDARD_CUTS),
    Spec("relstring", "relstring", "float_list", (10.0,)),
    Spec("recall", "float", "int_cuts", STANDARD_CUTS),
    Spec("infAP", "float"),
    Spec("gm_bpref", "gm"),
    Spec("Rprec_mult", "float", "float_cuts", R_MULTIPLES),
    Spec("utility", "float", "float_list", (1.0, -1.0, 0.0, 0.0)),
    Spec("11pt_avg", "float", "float_list", RECALL_LEVELS),
    Spec("binG", "float"),
    Spec("G", "float", "pairs"),
    Spec("dcg", "float", "pairs"),
    Spec("ideal_dcg", "float", "pairs"),
    Spec("ndcg", "float", "pairs"),
    Spec("ndcg_rel", "float", "pairs"),
    Spec("Rndcg", "float", "pairs"),
    Spec("ndcg_cut", "float", "int_cuts", STANDARD_CUTS),
    Spec("map_cut", "float", "int_cuts", STANDARD_CUTS),
    Spec("relative_P", "float", "int_cuts", STANDARD_CUTS),
    Spec("success", "float", "int_cuts", (1, 5, 10)),
    Spec("set_P", "float"),
    Spec("set_relative_P", "float"),
    Spec("set_recall", "float"),
    Spec("set_map", "float"),
    Spec("set_F", "float", "float_list", (1.0,)),
    Spec("num_nonrel_judged_ret", "count"),
    *(Spec(n, "count", needs="prefs") for n in _PREFS_COUNTS),
    *(Spec(n, "float", needs="prefs") for n in _PREFS_RATIOS),
    Spec("map_avgjg", "float", needs="qrels_jg"),
    Spec("P_avgjg", "float", "int_cuts", STANDARD_CUTS, needs="qrels_jg"),
    Spec("Rprec_mult_avgjg", "float", "float_cuts", R_MULTIPLES, needs="qrels_jg"),
    Spec("yaap", "float"),
    Spec("rbp", "float", "pairs"),
    Spec("rbp_resid", "float", "pairs"),
    Spec("unj", "float", "int_cuts", (5, 10, 20)),
]}
ORDER = list(SPECS)

NICKNAMES = {
    "official": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"],
    "set": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"],
    "all_trec": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"],
    "all_prefs": ["runid", "num_q", *_PREFS_COUNTS, *_PREFS_RATIOS[:-3], "prefs_simp_imp", "prefs_pair_imp",
                  "prefs_avgjg_imp"],
    "prefs": ["runid", "num_q", *_PREFS_COUNTS, "prefs_simp", "prefs_pair", "prefs_avgjg"],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
}
OFFICIAL = NICKNAMES["official"]
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")  # -R (formats.c)
# trec_eval.c resets these (exact names; and unj*) after evaluating a -c topic's stand-in ranking
CLEARED_FOR_STAND_IN = {"num_ret": 0.0, "utility": 0.0, "rbp_resid": 0.0, "relstring": ""}


@dataclass(frozen=True)
class MeasureRequest:
    """One requested measure with its parameters and printed names."""

    measure: Spec
    values: tuple  # cut-offs, numbers or (name, value) pairs
    raw: str | None  # the parameter text as given, for names that echo it

    @property
    def name(self) -> str:
        return self.measure.name

    @property
    def names(self) -> list[str]:
        m = self.measure
        if m.params == "int_cuts":
            return [f"{m.name}_{k}" for k in self.values]
        if m.params == "float_cuts":  # append_double: snprintf into strlen(name) + 10 bytes
            return [f"{m.name}_{x:3.2f}"[:len(m.name) + 9] for x in self.values]
        if m.params in ("float_list", "pairs") and self.raw is not None:
            return [f"{m.name}_{self.raw}"]
        return [m.name]

    @property
    def gains(self) -> tuple[tuple[int, float], ...]:
        """``level=gain`` pairs whose level is an integer (gain_init.c's valid_int), in the order given."""
        return tuple((int(a), b) for a, b in self.values if re.fullmatch(r"[+-]?[0-9]+", a))


def atol(text: str) -> int:
    """C's atol: the leading integer, 0 when there is none."""
    head = re.match(r"[ \t\n\v\f\r]*([+-]?[0-9]+)", text)
    return int(head.group(1)) if head else 0


def atof(text: str) -> float:
    """C's atof on the number forms trec_eval's parameters use (0.0 when there is none)."""
    head = re.match(r"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", text)
    return float(head.group(1)) if head else 0.0


def _pairs_well_formed(raw: str) -> bool:
    """get_param_pairs' check: no ``,,``, no leading ``,``, no ``==``, ends in a pair."""
    last = ","
    for ch in raw:
        if ch in ",=":
            if ch == last:
                return False
            last = ch
    return last == "="


def parameters(m: Spec, raw: str) -> tuple:
    """``raw`` read as trec_eval's meas_init.c reads it for ``m``; its refusals exit 2."""
    pieces = raw.split(",")
    values: list[float]
    if m.params == "int_cuts":
        values = sorted(atol(p) for p in pieces)
        if values[0] <= 0:
            raise TrecMeasureError(f"{m.name}.{raw}: cut-offs must be positive (trec_eval: negative cutoff)",
                                   exit_code=EXIT_FILE)
    elif m.params == "float_cuts":
        values = sorted(atof(p) for p in pieces)
    elif m.params == "float_list":
        return tuple(atof(p) for p in pieces)  # in the order given, duplicates kept
    elif m.params == "pairs":
        if not _pairs_well_formed(raw):
            raise TrecMeasureError(f"{m.name}.{raw}: expected name=value pairs (trec_eval: malformed pair "
                                   "parameters)", exit_code=EXIT_FILE)
        return tuple((name, atof(value)) for name, value in (p.split("=") for p in pieces))
    else:
        return m.default  # trec_eval accepts and ignores parameters of a measure that takes none
    if len(set(values)) < len(values):
        raise TrecMeasureError(f"{m.name}.{raw}: a cut-off is given twice (trec_eval: duplicate cutoffs)",
                               exit_code=EXIT_FILE)
    return tuple(values)


def _printed_name_hint(name: str) -> str:
    """For a measure written as trec_eval prints it (``P_5``, ``ndcg_cut_10``): the ``-m``
    spelling, which puts the cut-off after a dot.

    >>> _printed_name_hint("P_5"), _printed_name_hint("ndcg_cut_10"), _printed_name_hint("Q_5")
    ("; did you mean 'P.5'? (trec_eval prints P_5; -m takes the cut-offs after a dot)", \
"; did you mean 'ndcg_cut.10'? (trec_eval prints ndcg_cut_10; -m takes the cut-offs after a dot)", '')
    """
    base, sep, cutoff = name.rpartition("_")
    if sep and base in SPECS and cutoff.replace(".", "", 1).isdigit():
        return f"; did you mean '{base}.{cutoff}'? (trec_eval prints {name}; -m takes the cut-offs after a dot)"
    return ""


def parse_requests(texts: list[str]) -> list[MeasureRequest]:
    """trec_eval's ``-m`` options, in its measure order: ``P``, ``P.5,10``,
    ``iprec_at_recall..1,.5``, ``ndcg.1=3,2=9``, ``official``, ``all_trec``. As in trec_eval,
    the first parameters given for a measure are the ones used."""
    wanted: dict[str, None] = {}
    given: dict[str, str] = {}
    for text in texts:
        name, dot, raw = text.partition(".")
        if dot and not raw:
            raise TrecMeasureError(f"measure {text!r} has an empty parameter list (trec_eval: improper measure)")
        if dot:
            given.setdefault(name, raw)
        if name in NICKNAMES:
            names = NICKNAMES[name]
        elif name in SPECS:
            names = [name]
        else:
            raise TrecMeasureError(f"unknown trec_eval measure {name!r} (trec_eval: illegal measure)"
                                   + _printed_name_hint(name))
        for n in names:
            wanted.setdefault(n, None)
    requests = []
    for name in sorted(wanted, key=ORDER.index):
        m, text_given = SPECS[name], given.get(name)
        requests.append(MeasureRequest(m, m.default if text_given is None else parameters(m, text_given), text_given))
    return requests


def check_format(requests: list[MeasureRequest], rel_format: str) -> None:
    """trec_eval cannot compute a measure from another rel_info format (exit 4)."""
    have = "prefs" if rel_format == "qrels_prefs" else rel_format
    for r in requests:
        if r.measure.needs not in ("any", have):
            needed = "prefs or -R qrels_prefs" if r.measure.needs == "prefs" else r.measure.needs
            raise TrecMeasureError(f"{r.name} is computed from -R {needed} judgments, not -R {rel_format} "
                                   "(trec_eval: Can't calculate measure)", exit_code=EXIT_TOPIC)

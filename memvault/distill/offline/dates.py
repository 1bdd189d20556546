"""When a statement says its fact happened: dates in the text, relative ones resolved against the turn's time.

"I ran a charity race last Saturday" said on Thursday 2023-05-25 happened on 2023-05-20; "上周三" said on
2026-04-02 (a Thursday) is 2026-03-25. Pure and deterministic. Rules (eval/distill/README.md labels the same):
- a day: yesterday/昨天 -1, the day before yesterday/前天 -2, today/tonight/this morning/今天 0, tomorrow/明天 +1;
- a weekday (weeks run Monday to Sunday): "last Saturday"/"上周六" is that day of the week before; "on Saturday"
  told of the past is the latest such day before the turn's day; "next Saturday", "下周三" the day of next week;
  "this/on Saturday" in a plan the next such day;
- a week: last week/上周, this week, next week/下周 is the Monday of that week; last/this/next weekend (上周末…)
  its Saturday; N days/weeks ago, N天前 count back N days or 7N days;
- a month: last month/上个月, this month, next month/下个月 and a month's name ("in August", "九月", "明年十月")
  are the 1st of that month (a name: in the turn's year unless the words say another); last year/去年 January 1st;
- absolute dates: 2023-05-07, May 7(, 2023), 7 May 2023, 2023年5月7日, 5月7日 (the turn's year), 五一 (May 1).
These are the rules eval/distill/README.md labels with ("Dates").
The first date expression of the text wins. Returns None when the text names no date.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
           "半": 0}
_MON = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
       r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(p, re.I)) for name, p in (
    ("iso", r"\b(?P<y>(?:19|20)\d\d)-(?P<m>\d\d)-(?P<d>\d\d)\b"),
    ("zh_ymd", r"(?P<y>(?:19|20)\d\d)\s*年\s*(?P<m>\d{1,2})\s*月(?:\s*(?P<d>\d{1,2})\s*[日号])?"),
    ("zh_md", r"(?<![\d年])(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"),
    ("en_mdy", rf"\b{_MON}\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>(?:19|20)\d\d))?"),
    ("en_dmy", rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}\b(?:,?\s+(?P<y>(?:19|20)\d\d))?"),
    ("en_my", rf"\b(?:in|since|during|of|this|next|last)\s+{_MON}\b(?!\s+\d)(?:,?\s+(?P<y>(?:19|20)\d\d))?"),
    ("zh_month", r"(?P<rel>明年|去年|今年)?(?<!\d)(?P<m>十[一二]?|[一二三四五六七八九]|1[0-2]|[1-9])\s*月(?![\d一二三四五六七八九十]*\s*[日号])(?!份?[的]?[\d]+)"),
    ("zh_holiday", r"(?P<h>五一|国庆|元旦|十一假期|圣诞节?)"),
    ("day_rel", r"\b(?P<w>the day before yesterday|yesterday|today|tonight|this (?:morning|afternoon|evening)|"
                r"tomorrow|last night)\b"),
    ("zh_day", r"(?P<w>大前天|前天|昨天|昨晚|今天|今早|今晚|明天|后天)"),
    ("weekday", r"\b(?P<rel>last|next|this|on|this past|this coming)\s+(?P<wd>monday|tuesday|wednesday|thursday|"
                r"friday|saturday|sunday)\b"),
    ("weekend", r"\b(?P<rel>last|this past|next|this|over the|on the)\s+weekend\b"),
    ("zh_weekday", r"(?P<rel>上上|上|下|这|本)?(?:个)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"),
    ("zh_weekend", r"(?P<rel>上|下|这)?(?:个)?周末"),
    ("ago", r"\b(?P<n>\d+|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
            r"(?P<unit>days?|weeks?|months?|years?)\s+ago\b"),
    ("zh_ago", r"(?P<n>\d+|[一两二三四五六七八九十半])\s*(?:个)?(?P<unit>天|周|星期|礼拜|月|年)(?:前|以前|之前)"),
    ("span", r"\b(?P<rel>last|next|this)\s+(?P<unit>week|month|year|summer|winter|spring|fall|autumn)\b"),
    ("zh_span", r"(?P<w>上上周|上周|上个星期|上星期|下周|下个星期|下星期|上个月|上月|下个月|下月|去年|前年|明年|今年|这个月|本月)"),
)]
_SEASON_MONTH = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _month_start(d: date, delta: int) -> date:
    m = d.month - 1 + delta
    return date(d.year + m // 12, m % 12 + 1, 1)


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _past_weekday(today: date, wd: int) -> date:
    back = (today.weekday() - wd) % 7 or 7
    return today - timedelta(days=back)


def _next_weekday(today: date, wd: int) -> date:
    ahead = (wd - today.weekday()) % 7 or 7
    return today + timedelta(days=ahead)


def _count(word: str) -> int:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _NUM.get(word, _ZH_NUM.get(word, 1))


def _resolve(name: str, m: re.Match[str], today: date, future: bool) -> date | None:
    g = {k: (v.lower() if isinstance(v, str) else v) for k, v in m.groupdict().items()}
    if name in ("iso", "zh_ymd"):
        return _safe(int(g["y"]), int(g["m"]), int(g.get("d") or 1))
    if name == "zh_md":
        return _safe(today.year, int(g["m"]), int(g["d"]))
    if name in ("en_mdy", "en_dmy"):
        return _safe(int(g["y"]) if g.get("y") else today.year, _MONTHS[g["mon"][:4] if g["mon"].startswith("sept")
                                                                       else g["mon"][:3]], int(g["d"]))
    if name == "en_my":
        mon = _MONTHS[g["mon"][:3]]
        year = int(g["y"]) if g.get("y") else today.year
        first = m.group(0).split()[0].lower()
        if not g.get("y") and first == "next" or (first == "next" and mon <= today.month):
            year = today.year + (mon <= today.month)
        elif not g.get("y") and first == "last":
            year = today.year - (mon >= today.month)
        return _safe(year, mon, 1)
    if name == "zh_month":
        zh_m = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
                "十一": 11, "十二": 12}
        mon = int(g["m"]) if g["m"].isdigit() else zh_m[g["m"]]
        year = today.year + {"明年": 1, "去年": -1}.get(g.get("rel") or "", 0)
        return _safe(year, mon, 1)
    if name == "zh_holiday":
        return {"五一": date(today.year, 5, 1), "国庆": date(today.year, 10, 1), "十一假期": date(today.year, 10, 1),
                "元旦": date(today.year + (today.month > 1), 1, 1), "圣诞": date(today.year, 12, 25),
                "圣诞节": date(today.year, 12, 25)}[g["h"]]
    if name in ("day_rel", "zh_day"):
        shift = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1, "大前天": -3,
                 "前天": -2, "昨天": -1, "昨晚": -1, "明天": 1, "后天": 2}.get(g["w"], 0)
        return today + timedelta(days=shift)
    monday = today - timedelta(days=today.weekday())
    if name == "weekday":
        wd = _WEEKDAYS[g["wd"]]
        if g["rel"] == "last":
            return monday - timedelta(weeks=1) + timedelta(days=wd)
        if g["rel"] == "next":
            return monday + timedelta(weeks=1, days=wd)
        if g["rel"] == "this":
            # the day of this week, whatever the tense ("booked tickets for this Saturday" said on a Tuesday is
            # four days ahead; "went hiking this Monday" said on a Thursday three days back); a plan for a day
            # this week has already passed is next week's
            day = monday + timedelta(days=wd)
            return day + timedelta(weeks=1) if future and day < today else day
        ahead = g["rel"] == "this coming" or (future and g["rel"] == "on")
        return _next_weekday(today, wd) if ahead else _past_weekday(today, wd)
    if name == "weekend":
        if g["rel"] in ("last", "this past"):
            return monday - timedelta(weeks=1) + timedelta(days=5)
        if g["rel"] == "next":
            return monday + timedelta(weeks=1, days=5)
        if g["rel"] == "this":
            return monday + timedelta(days=5)
        return _next_weekday(today, 5) if future else _past_weekday(today, 5)
    if name == "zh_weekday":
        wd = _ZH_WEEKDAY[g["wd"]]
        weeks = {"上上": -2, "上": -1, "下": 1, "这": 0, "本": 0}.get(g["rel"] or "", None)
        if weeks is None:
            return _next_weekday(today, wd) if future else _past_weekday(today, wd)
        return monday + timedelta(weeks=weeks, days=wd)
    if name == "zh_weekend":
        weeks = {"上": -1, "下": 1, "这": 0}.get(g["rel"] or "", None)
        if weeks is None:
            return _next_weekday(today, 5) if future else _past_weekday(today, 5)
        return monday + timedelta(weeks=weeks, days=5)
    if name in ("ago", "zh_ago"):
        n, unit = _count(g["n"]), g["unit"]
        if unit.startswith(("day", "天")):
            return today - timedelta(days=n)
        if unit.startswith(("week", "周", "星期", "礼拜")):
            return today - timedelta(weeks=n)
        if unit.startswith(("month", "月")):
            return _month_start(today, -n)
        return date(today.year - n, 1, 1)
    if name == "span":
        rel, unit = g["rel"], g["unit"]
        step = {"last": -1, "next": 1, "this": 0}[rel]
        if unit == "week":
            return monday + timedelta(weeks=step)
        if unit == "month":
            return _month_start(today, step)
        if unit == "year":
            return date(today.year + step, 1, 1)
        month = _SEASON_MONTH[unit]
        year = today.year + (step if step else 0)
        if step == -1 and month > today.month:
            year = today.year - 1
        elif step == -1:
            year = today.year - (1 if month >= today.month else 0)
        return date(year, month, 1)
    if name == "zh_span":
        w = g["w"]
        return {"上上周": monday - timedelta(weeks=2), "上周": monday - timedelta(weeks=1),
                "上个星期": monday - timedelta(weeks=1), "上星期": monday - timedelta(weeks=1),
                "下周": monday + timedelta(weeks=1), "下个星期": monday + timedelta(weeks=1),
                "下星期": monday + timedelta(weeks=1), "上个月": _month_start(today, -1), "上月": _month_start(today, -1),
                "下个月": _month_start(today, 1), "下月": _month_start(today, 1), "去年": date(today.year - 1, 1, 1),
                "前年": date(today.year - 2, 1, 1), "明年": date(today.year + 1, 1, 1),
                "今年": date(today.year, 1, 1), "这个月": _month_start(today, 0), "本月": _month_start(today, 0)}[w]
    return None


def when(text: str, at: str | None, future: bool = False) -> str | None:
    """The date (YYYY-MM-DD) the first date expression of `text` names, relative ones counted from `at` (the
    turn's ISO time); None when there is none or `at` is unusable for a relative one. `future`: the text is a
    plan, so a bare weekday ("on Saturday", "周六") is the next one, not the last."""
    found = first_expression(text, at, future)
    return found[2].isoformat() if found else None


def first_expression(text: str, at: str | None, future: bool = False
                     ) -> tuple[str, re.Match[str], date] | None:
    """(pattern name, match, the day it names) for the first date expression of `text` that resolves."""
    today = _day(at)
    best: tuple[int, str, re.Match[str]] | None = None
    for name, pat in _PATTERNS:
        m = pat.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), name, m)
    if best is None:
        return None
    _start, name, m = best
    if today is None:
        if name not in ("iso", "zh_ymd") and not (name in ("en_mdy", "en_dmy") and m.group("y")):
            return None
        today = date(2000, 1, 1)
    found = _resolve(name, m, today, future)
    return (name, m, found) if found else None


def _day(at: str | None) -> date | None:
    if not at or len(at) < 10:
        return None
    try:
        return date.fromisoformat(at[:10])
    except ValueError:
        return None

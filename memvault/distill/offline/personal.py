"""What a person tells about their own life (issue 20): events, plans, habits, relationships, likes and dislikes,
and stated feelings, in English and Chinese. Pure, deterministic; cue tables are data at the top.

A sentence counts only when its speaker is its subject ("I ran…", "My sister lives…", "我上周去了…") and it says
something about them: a remark about the other person ("That must be fun", "You'd be a great counselor!",
"I'm so proud of you"), a question, advice, thanks, a greeting or agreement is never a memory. extract.py drops
questions, hedges, hypotheticals and negations before this module sees a sentence.
"""

from __future__ import annotations

import re

from memvault.distill.offline import cues, dates

_I = re.IGNORECASE
MIN_CONTENT = 2  # words other than pronouns, articles and light verbs a sentence needs to be worth a card

# --------------------------------------------------------------------------- English

# "I just wanted to let you know (that)", "Just wanted to give you the heads up on what's been happening lately":
# said before what the speaker tells.
_TELL_YOU = (r"(?:i )?(?:just )?(?:want(?:ed)?|had|have) to (?:let you know|tell you|share(?: something(?: cool)?)?"
             r"(?: with you)?|give you (?:a|the) heads up(?: on what's been (?:happening|going on)(?: lately)?)?)"
             r"(?! about)(?: that)?")  # "I wanted to tell you about my school event" keeps its news whole
# "A lot's happened since we last talked", "Since our last chat": news follows.
_SINCE_LAST = r"since (?:we (?:last )?(?:talked|spoke|chatted)|our last (?:chat|talk)|(?:we )?last time)"
_SINCE = (r"(?:(?:a lot|lots|much|so much)(?:'s| has)? (?:been going on|happened)(?: " + _SINCE_LAST + r")?|"
          + _SINCE_LAST + r")(?=\s*[-–—:,!])")  # only before what it announces ("A lot's been going on in my life")
# Lead words before the subject: "So", "Oh and", "Yesterday,", "Last week", a vocative "Mel,".
_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|yo|oh|wow|aw+|ah|thanks|thank you|congrats|yeah|yes|yep|ok|okay|haha|lol)"
    r"(?:,?\s+[A-Z][\w'-]+)?\s*[,!.]\s*|(?:so|and|but|also|oh|well|actually|honestly|anyway|btw|by the way|"
    r"guess what|funny enough|(?:great|good|big|exciting|some) news|long time no (?:see|talk|chat)|" + _SINCE + r"|"
    + _TELL_YOU + r"|"
    r"plus|then|now|just|recently|lately|finally|yesterday|today|tonight|this (?:morning|week|weekend|month|year)|"
    r"last (?:night|week|weekend|month|year|summer|winter|fall|spring|friday|saturday|sunday|monday|tuesday|"
    r"wednesday|thursday)|a (?:few|couple of) (?:days|weeks|months) ago|over the weekend|the other day)"
    r"\s*[,:!-]?\s+)+", _I)
# … and the ones a title keeps off: greetings, thanks, fillers (the time words stay: they date what follows).
_LEAD_TITLE = re.compile(
    r"^(?:(?:hey|hi|hello|yo|oh|wow|aw+|ah|thanks|thank you|congrats|yeah|yes|yep|ok|okay|haha|lol)"
    r"(?:,?\s+[A-Z][\w'-]+)?\s*[,!.]\s*|(?:so|and|but|also|oh|well|actually|honestly|anyway|btw|by the way|"
    r"guess what|funny enough|plus|random|(?:great|good|big|exciting|some) news|quick note|sure(?=[,!.])|anyways|"
    r"on (?:another|a (?:different|side|lighter|related|happier)) note|speaking of (?:which|that)|in other news|"
    r"long time no (?:see|talk|chat)|" + _SINCE + r"|" + _TELL_YOU + r")"
    r"\s*[,:!-]?\s+)+", _I)
_FIRST = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|ive|we|we're|we've|we'd|we'll|me and|my|our|"
                    r"(?:my|our)\s+[\w' -]{1,30}?\s+and\s+i)\b", _I)
# Said of the other person or of the moment, not of the speaker's life.
_REMARK = re.compile(
    r"^(?:i|we)\s*(?:(?:totally|completely|really|so|just|absolutely|definitely|too|also|can)\s+)*(?:"
    r"agree|understand|see|know(?: what| right| how| that feeling| the feeling)|get (?:it|that|you)|"
    r"hear (?:you|that(?=\s*[,.!;]))|"  # "I hear that, …" agrees; "I hear that the bakery closed" reports
    r"feel (?:you|the same|that)|appreciate|bet|hope (?:you|your|it|that|so|the)|wish (?:you|your)|"
    r"can(?:'t| not)? (?:wait to (?:see|hear)|imagine|relate|believe)|'m (?:so |really |very )?(?:sorry|glad|happy|"
    r"proud|excited|thrilled) (?:for|of|to hear|that you|you)|am (?:so |really |very )?(?:sorry|glad|happy|proud) "
    r"(?:for|of|to hear|that you)|love (?:that|this|it|those|these|your|how|the way|to hear|hearing|seeing|you)|"
    r"like (?:that|this|it|your|how|the way)|'d love to (?:see|hear)|would love to (?:see|hear)|"
    r"'ll (?:do my best|keep (?:that|it|you)|try|think about it|let you know|check it out|be there for)|"
    r"'m (?:always |still |just )?here (?:for|to|if)|am (?:always )?here (?:for|to|if)|'m sure|am sure|think (?:you|your|that's|it's)|"
    r"can tell|couldn't agree|have to (?:say|agree)|must say|'m (?:impressed|in awe)|admire|"
    r"'m (?:rooting|cheering) for|'ve got (?:your back|you)|totally|"
    r"(?:knew|know|thought|bet|guess|figured) you|must (?:miss|love|know|think)|"
    r"(?:just |already |also )?(?:looked at|read|saw|checked|tried|watched|heard|got|love|loved|liked) (?:it|that|this|them|those)"
    r"(?! \w+ (?:years?|months?|weeks?|days?) ago))\b", _I)
_QUESTIONISH = re.compile(r"^(?:what|how|why|when|where|who|which|any|anything|do you|did you|have you|are you)\b", _I)
_CHATTER = re.compile(r"^(?:hey|hi|hello|thanks|thank you|thx|wow|congrats|congratulations|good luck|take care|sorry|"
                      r"talk (?:to you )?soon|see you|bye|cheers|aww+|omg|yay|sounds (?:good|great|fun)|"
                      r"that's|that is|that was|it's|it is|it was|you|your|you're|you've|what a|so cool|"
                      r"so great|nice|cool|awesome|great|lovely|amazing|glad|sounds|totally|agreed?|"
                      r"(?:really )?appreciate|hope you|hope your|no worries|no problem|same here|me too|ditto|"
                      r"long time no (?:see|talk|chat))\b", _I)
# A plan: said as one ("planning", "thinking about", "signing up"), or a future ("I'll", "going to") with a
# time ("next month", "on Saturday", "this summer"); a future without one is mostly a promise or cheer
# ("We'll make it through this", "I'm gonna keep believing in myself").
_PLAN = re.compile(
    r"\b(?:(?:i|we)(?:'m| am|'re| are)\s+(?:\w+\s+)?(?:planning(?: on| to)?|thinking (?:about|of)|hoping to|about to|"
    r"looking (?:to|forward to)|heading (?:to|off|out|up|down|back)|off to|getting ready to|signing up|due to)|"
    r"(?:i|we)\s+(?:plan|intend|hope|aim|decided|'ve decided)\s+to|my plan is|our plan is)\b", _I)
_FUTURE = re.compile(r"\b(?:(?:i|we)(?:'ll| will)|(?:i|we)(?:'m| am|'re| are) (?:going to|gonna|going|heading|flying|"
                     r"driving|leaving|moving|visiting|traveling|travelling|hosting|having|starting|seeing))\b", _I)
_WHEN_LATER = re.compile(
    r"\b(?:next (?:week|month|year|summer|winter|spring|fall|weekend|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|tomorrow|tonight|this (?:weekend|summer|winter|spring|fall|month|year|friday|saturday|"
    r"sunday)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:january|february|march|april|"
    r"may|june|july|august|september|october|november|december|a (?:few|couple of) (?:days|weeks|months)|\d+ "
    r"(?:days|weeks|months))|soon|later this)\b", _I)
_WHEN_ANY = re.compile(r"\b(?:yesterday|today|tonight|tomorrow|last (?:night|week|weekend|month|year|summer)|"
                       r"\w+ (?:days|weeks|months|years) ago)\b", _I)
# What the speaker is doing these days (their work, study, a project): "I'm teaching science", "we're renovating".
_PROGRESSIVE = re.compile(r"\b(?:i|we)(?:'m| am|'re| are) (?:still |now |currently |really |also |finally )?(?:working|"
                          r"studying|teaching|learning|living|training|volunteering|dating|building|writing|running|"
                          r"renovating|saving|taking|doing|practicing|practising|reading|playing|raising|caring|"
                          r"looking for|applying|interviewing|preparing|trying to|starting|launching|opening|"
                          r"growing|making|creating|coaching|leading|managing|organizing|organising|painting|"
                          r"researching|recovering|moving|expecting)\b(?! (?:to|for) you)", _I)
_HABIT = re.compile(
    r"\b(?:usually|always|often|every (?:day|morning|evening|night|week|weekend|month|year|summer|winter|time)|"
    r"each (?:day|morning|week)|on weekends|regularly|daily|weekly|most days|(?:i|we) used to|"
    r"(?:i|we)(?:'ve| have) been \w+ing)", _I)
_LIKE = re.compile(
    r"\b(?:(?:i|we)\s+(?:really |absolutely |just |totally |also |still |especially |truly )*"
    r"(?:love|like|enjoy|adore|hate|dislike|prefer|can't stand|cannot stand|don't like|do not like)\s+"
    r"(?!(?:you|your|that|this|it|those|these|how|the way|hearing|seeing|to hear)\b)|"
    r"my (?:favou?rite|go-to)\b|(?:i|we)(?:'m| am|'re| are) (?:really |so |super )?(?:into|keen on|passionate about|"
    r"a (?:big |huge )?fan of|obsessed with|allergic to))", _I)
_RELATION = re.compile(
    r"\b(?:my|our) (?:\w+ )?(?:husband|wife|partner|fianc[ée]e?|boyfriend|girlfriend|kids?|son|daughter|children|"
    r"baby|mom|mum|mother|dad|father|parents|sister|brother|siblings?|family|grandma|grandmother|grandpa|"
    r"grandfather|aunt|uncle|cousin|niece|nephew|friends?|bestie|best friend|roommate|neighbou?r|dog|cat|pets?|"
    r"puppy|kitten|boss|coworkers?|colleagues?|team|job|home|house|apartment|car|band|mentor|teacher|students?)\b|"
    r"\b(?:i|we)(?:'m| am|'re| are) (?:a|an|the) (?!(?:bit|little|lot|big fan)\b)\w+|"
    r"\b(?:i|we) (?:work|live|grew up|was born|were born|study|studied|teach|volunteer|moved)\b|"
    r"\b(?:i|we) (?:have|'ve got|got) (?:a|an|two|three|four|\d+) \w+|\b(?:i|we)(?:'ve| have) known\b", _I)
_FEELING = re.compile(
    r"\b(?:i|we)\s*(?:'m|am|was|were|felt|feel|'ve been|have been|'re|are)\s+(?:so |really |super |very |pretty |"
    r"a bit |kind of |kinda |extremely |incredibly |totally )*(?:happy|sad|excited|nervous|anxious|proud|grateful|"
    r"thankful|stressed|overwhelmed|relieved|scared|hopeful|thrilled|lonely|exhausted|inspired|motivated|blessed|"
    r"worried|frustrated|upset|heartbroken|devastated|nostalgic|content|at peace|determined|terrified|great|good|"
    r"better|amazing|awful|terrible|wonderful|alive|free|lucky|humbled|empowered|accepted|stuck|lost|drained)\b"
    r"(?!\s+(?:for|of) you)", _I)
_PAST = re.compile(
    r"\b(?:i|we|he|she|they|(?:my|our) [\w' ]{1,30}?)\s+(?:just\s+|finally\s+|recently\s+|also\s+|actually\s+|"
    r"even\s+|already\s+|first\s+|both\s+|all\s+)*(?:[a-z]*[a-df-z]ed|went|ran|got|took|made|had|saw|met|bought|began|did|"
    r"won|lost|found|gave|wrote|read|drove|flew|left|came|became|built|sang|swam|spent|sold|taught|told|caught|"
    r"brought|paid|kept|held|ate|drank|rode|threw|chose|wore|fell|broke|grew|knew|sent|shot|sat|stood|slept|"
    r"thought|heard|quit|put|cut|set|hit|hurt|lent|fed|led|fought|forgot|drew|woke)\b|\b(?:i|we)(?:'ve| have|'d| had)\s+(?:just\s+|finally\s+|recently\s+|already\s+|also\s+)*"
    r"(?:[a-z]*[a-df-z]ed|been|got|gotten|done|made|taken|begun|written|seen|met|bought|found|won|read|run)\b|"
    r"\b(?:my|our) [\w' ]{1,30}? (?:was|were|got) [a-z]+(?:ed|en|t)\b", _I)
# A thing done, not a state of mind: "I felt" and "I was" are feelings, "I started" is an event.
_DONE = re.compile(r"\b(?:i|we|(?:my|our) [\w' ]{1,30}?)\s+(?:just\s+|finally\s+|recently\s+|also\s+|actually\s+)*"
                   r"(?!(?:felt|was|were|had|thought|needed|wanted|loved|liked|hated|enjoyed|hoped|wished)\b)"
                   r"(?:[a-z]*[a-df-z]ed|went|ran|got|took|made|saw|met|bought|began|did|won|lost|found|gave|wrote|read|"
                   r"drove|flew|left|came|became|built|sang|swam|spent|sold|taught|told|caught|brought|paid|ate|rode|"
                   r"chose|broke|grew|sent|shot|slept|heard|flew|quit|put|cut|set|hit|hurt|lent|fed|led|fought|forgot|drew|dug|"
                   r"sang|won|wore|threw|understood|began|sat|stood|woke|swore|tore|bit|hid|rang|sank|shook|stole|"
                   r"struck|swung|wept|wound)\b", _I)
_ELIDED = re.compile(r"^(?:just\s+)?(?:went|got|finished|started|took|made|had|ran|visited|adopted|bought|joined|"
                     r"signed|moved|spent|tried|picked|booked|met|saw|painted|baked|wrote|read|won|did)\b", _I)
# Someone of the speaker's life as the subject of what happened ("Lena flew back to Denver last Sunday"): a
# name (not the other person's: the caller strips vocatives) or "my sister".
_NAMED_SUBJECT = re.compile(r"^(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|(?:my|our) (?:\w+ ){0,2}\w+)\s+(?!(?:is|are|was|were|'s)\b)")
_HABIT_LEAD = re.compile(r"^(?:every|each) (?:day|morning|evening|night|week|weekend|monday|tuesday|wednesday|"
                         r"thursday|friday|saturday|sunday|summer|winter|month|year)s?\b", _I)
_REPORTED = re.compile(r"\b(?:always |often |usually )?(?:says|said|told me|tells me|claims|used to say)\b", _I)
_DATED = re.compile(
    r"\b(?:yesterday|tomorrow|last (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|next (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"\w+ (?:days|weeks|months) ago|(?:on|this) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?\b)", _I)
_VERB = re.compile(r"\b(?:starts?|begins?|opens?|ends?|closes?|is|are|was|were|happens?|happened|arrives?|"
                   r"arrived|leaves?|left|comes?|came|flew|moved|got|had|went|[a-z]{3,}ed)\b", _I)
_PHOTO = re.compile(r"\[\s*shares? (?:a |an )?(?:photo(?:graph)?y?|picture|pic|image|video|screenshot) of ([^\]]{3,200})\]", _I)

# --------------------------------------------------------------------------- Chinese

_ZH_LEAD = re.compile(r"^(?:(?:对了|对|是的|是啊|嗯嗯?|哦|唉|哎|哎呀|哇|啊|哈哈+|嘿|其实|话说|说起来|另外|还有|而且|然后|反正|不过|说实话|最近|前阵子|"
                      r"刚刚|刚才|昨天|今天|前天|(?:上|这|下)?(?:个)?(?:周末|星期[一二三四五六日天]?|周[一二三四五六日]?|月)|"
                      r"去年|今年|明年)\s*[，,、]?\s*)+")
_ZH_LEAD_TITLE = re.compile(r"^(?:(?:对了|对|是的|是啊|嗯嗯?|哦|唉|哎|哎呀|哇|啊|哈哈+|嘿|其实|话说|说起来|另外|还有|而且|然后|"
                            r"反正|不过|说实话)\s*[，,、]?\s*)+")
_ZH_FIRST = re.compile(r"^(?:我|我们|咱们|咱|俺)")
_ZH_REMARK = re.compile(r"^(?:我们?)(?:也|都|真|很|太|好)?(?:同意|理解|懂|明白|知道|觉得你|相信你|为你|替你|支持你|佩服|"
                        r"羡慕|祝|希望你|猜|想说|会一直|一定会|陪你|在呢)|^(?:你|您|你们|那|这|太|真|好|哇|谢谢|"
                        r"感谢|加油|恭喜|祝|哈|嗯嗯|没事|没关系|辛苦)")
_ZH_PLAN = re.compile(r"打算|准备|计划|要去|想去|下周|下个月|下月|明年|下次|过几天|将要|马上要|这周末要|周末要|报名了")
_ZH_HABIT = re.compile(r"每天|每周|每个?周末|每晚|每早|每年|经常|一般|通常|总是|习惯|平时|一直在|常常")
_ZH_LIKE = re.compile(r"^(?:我|我们)(?:很|特别|最|超|挺|非常|真的|一直|也|还是|比较)*(?:喜欢|爱吃|爱看|爱玩|热爱|迷上|讨厌|"
                      r"不喜欢|受不了|偏爱|对.{1,10}过敏)|我最爱的|我最喜欢的")
_ZH_RELATION = re.compile(r"^(?:我|我们)(?:的|家)?(?:老公|老婆|丈夫|妻子|先生|太太|爱人|孩子|儿子|女儿|闺女|宝宝|妈妈?|"
                          r"爸爸?|父母|爸妈|姐姐|妹妹|哥哥|弟弟|男朋友|女朋友|对象|朋友|闺蜜|室友|邻居|狗|猫|同事|老板|"
                          r"领导|公司|工作|家)|^我(?:是|在.{1,16}(?:工作|上班|上学|读书|当)|住在|来自|老家)|^我(?:们)?有(?:一|两|三|\d)")
_ZH_FEELING = re.compile(r"^(?:我|我们)(?:感觉|觉得|真的|特别|好|很|超|有点|非常|挺)*(?:开心|高兴|难过|伤心|紧张|激动|"
                         r"兴奋|焦虑|感激|感动|骄傲|自豪|累|害怕|担心|失落|幸福|满足|放松|崩溃|压力很大)")
_ZH_EVENT = re.compile(r"了|过|刚|已经")
_ZH_REPORTED = re.compile(r"说$|说[:：「“]|告诉我|听说|据说|(?:老婆|老公|媳妇|妈|爸|朋友|同事|老板|领导|他|她|他们|别人|人家|"
                          r"大家|网上)(?:总|老|一直|常)?说")
_DEFERRAL = re.compile(cues.DEFERRAL, _I)
# A Chinese speaker often drops "我": a statement of their own life with no subject ("上个月在三亚考到了 OW 证",
# "下周三飞东京", "每周二晚上雷打不动") counts when it names an event, a plan or a habit and is no remark.
_ZH_SUBJECTLESS_REMARK = re.compile(r"(?:真|太|好|多|挺)[\u4e00-\u9fff]{1,3}[啊呀吧哦呢嘛]|[啊呀吧哦呢嘛]$|^(?:没问题|包在|好的|"
                                    r"行|可以|当然|必须的|一定|肯定|放心|随时|客气|别客气|不客气|欢迎|记得|注意|别|"
                                    r"快|去吧|试试|要不|不如|应该)")
_ZH_OTHERS = re.compile(r"^[\u4e00-\u9fff]{1,3}(?:最爱|最喜欢|喜欢|爱吃|讨厌|怕|上|去了|考上|毕业|结婚|生了)")


def _strip(sentence: str, title: bool = False) -> str:
    """The sentence from its subject on (`title`: keeping the time words, which date what it says)."""
    lead, zh_lead = (_LEAD_TITLE, _ZH_LEAD_TITLE) if title else (_LEAD, _ZH_LEAD)
    s = sentence.strip().strip("\"'“”")
    for _ in range(3):
        before = s
        s = lead.sub("", s)
        s = re.sub(r"^[A-Z][a-z]+\s*[,!]\s+", "", s) if not _FIRST.match(s) else s  # vocative: "Mel, I went…"
        s = zh_lead.sub("", s)
        if s == before:
            break
    return s.strip()


def strip_lead(sentence: str, title: bool = False) -> str:
    return _strip(sentence, title)


def is_remark(sentence: str, zh: bool) -> bool:
    """Said of the other person or the moment, or chatter: thanks, greetings, cheer, a question's opening."""
    if zh:
        return bool(_ZH_REMARK.match(sentence) or _ZH_SUBJECTLESS_REMARK.search(sentence))
    return bool(_CHATTER.match(sentence) or _REMARK.match(sentence) or _QUESTIONISH.match(sentence))


_PARTS = re.compile(r"\s+[-–—]+\s+|;\s*|,\s+(?=(?:and |but |so )?(?:maybe |perhaps |hopefully )?"
                    r"(?:i|i'm|i've|we|we're|my|our)\b)", _I)
_ZH_PARTS = re.compile(r"[，,；;—]+")


def parts(sentence: str, zh: bool) -> list[str]:
    """The clauses of a sentence that may each tell something ("A lot's happened - I just got accepted…")."""
    return [p.strip() for p in (_ZH_PARTS if zh else _PARTS).split(sentence) if p and p.strip()]


def kind_of(sentence: str, zh: bool) -> tuple[str, bool, str] | None:
    """(card kind, is a plan, the sentence without greetings and lead words) for a sentence in which the
    speaker tells about their own life, else None."""
    s = _strip(sentence)
    found = _kind_zh(s, sentence) if zh else _kind_en(s, sentence)
    return (*found, _strip(sentence, title=True)) if found else None


_WORD = re.compile(r"[a-z][a-z']+", _I)
_LIGHT = frozenset("""
    i i'm i've i'd i'll im me my mine we we're we've we'd we'll us our you your it it's its this that these those
    there here they them their he she him her his a an the and or but so to of in on at for with by from as about
    just really so very too also still even only all some any much more most lot lots is am are was were be been
    being do did does done have has had get got go going gone make made take took thing things stuff one
    yeah yes oh well like not no now then when what how out up down off over again back
""".split())


def topical(s: str) -> bool:
    """Two or more words with a topic, other than praise ("It's peaceful and special", not "It's so cool")."""
    return sum(1 for w in _WORD.findall(s) if w.lower() not in _LIGHT and w.lower() not in _PRAISE) >= 2


_PRAISE = frozenset("great good cool awesome amazing nice fun lovely wonderful fantastic incredible".split())


def _content(s: str) -> int:
    """Words with a topic; a time ("yesterday", "last May") counts as one: "we just did it yesterday" dates
    what the turn before told."""
    return sum(1 for w in _WORD.findall(s) if w.lower() not in _LIGHT) + bool(_WHEN_ANY.search(s))


def _kind_en(s: str, sentence: str) -> tuple[str, bool] | None:
    if not s:
        return None
    if _content(s) < MIN_CONTENT and not only_photo(s):
        return None  # "I loved it", "I looked at it on the train": nothing to remember without the context
    if only_photo(s):
        return ("event", False)  # a photo shown with nothing else said: what it shows is what was shared
    if _QUESTIONISH.match(s) or _REMARK.match(s):
        return None
    if _DEFERRAL.search(s):
        return None
    if _REPORTED.search(s) and not re.match(r"^(?:i|we)\s+(?:\w+\s+)?(?:said|told)\b", s, _I):
        return None  # someone else's words ("My mom always says a dog picks you"): quoted, not stated
    first = bool(_FIRST.match(s))
    if not first:
        if _ELIDED.match(s):
            return ("event", False)
        if _HABIT_LEAD.match(s):
            return ("preference", False)  # "Every Thursday with Marcus": the answer to "do you still go…?"
        if _CHATTER.match(s):
            return None
        if _NAMED_SUBJECT.match(s) and (_DONE.search(s) or _PAST.search(s)):
            return ("event", False)  # "Lena flew back to Denver last Sunday", "My sister got married"
        if _DATED.search(s) and _VERB.search(s):
            return ("event", True)  # "Classes start April 4th at Paws & Play": a dated thing of their life
        if not re.search(r"\b(?:my|our|me|i|i'm|i've|we|we're|we've)\b", s, _I):
            return None
        # the speaker is in the sentence but not its subject ("Yesterday my sister and I…" was stripped above);
        # "Painting's a fun way to express my feelings" is still about them: a like
        if not (_RELATION.search(s) or _LIKE.search(s) or _PLAN.search(s) or _DONE.search(s)):
            return None
    if _PLAN.search(s) or ((_FUTURE.search(s) or _PROGRESSIVE.search(s)) and _WHEN_LATER.search(s)):
        return ("event", True)
    if _LIKE.search(s):
        return ("preference", False)
    if _DONE.search(s):
        return ("event", False)
    if _FEELING.search(s):
        return ("fact", False)
    if _HABIT.search(s):
        return ("preference", False)
    if _RELATION.search(s) or _PROGRESSIVE.search(s):
        return ("fact", False)
    if _PAST.search(s):
        return ("event", False)
    return None


def _kind_zh(s: str, sentence: str) -> tuple[str, bool] | None:
    if not s or _ZH_REMARK.match(s) or len(s) < 4 or _ZH_REPORTED.search(s) or _DEFERRAL.search(sentence):
        return None
    if not _ZH_FIRST.match(s):
        if _ZH_SUBJECTLESS_REMARK.search(s) or re.match(r"^(?:你|您|他|她|它|这|那)", s) or len(s) < 5:
            return None
        if _ZH_PLAN.search(sentence):
            return ("event", True)
        if _ZH_HABIT.match(s):
            return ("preference", False)
        if _ZH_OTHERS.match(s):
            return ("preference", False) if re.search(r"最爱|最喜欢|喜欢|爱吃|讨厌|怕", s[:6]) else ("event", False)
        if re.search(r"[了过]", s) and dates.when(sentence, "2000-06-15") not in (None, "2000-06-15"):
            return ("event", False)  # "上个月在三亚考到了 OW 证": an event dated by the speaker's own words
        return None
    if _ZH_PLAN.search(sentence):
        return ("event", True)
    if _ZH_LIKE.search(s):
        return ("preference", False)
    if _ZH_FEELING.search(s):
        return ("fact", False)
    if _ZH_HABIT.search(s):
        return ("preference", False)
    if _ZH_RELATION.search(s):
        return ("fact", False)
    if _ZH_EVENT.search(s):
        return ("event", False)
    return None


def first_person(text: str, zh: bool) -> bool:
    """The clause's subject is the speaker ("I adopted…", "我对花生过敏")."""
    return bool((_ZH_FIRST if zh else _FIRST).match(text))


def photo_caption(sentence: str) -> str | None:
    m = _PHOTO.search(sentence)
    return m.group(1).strip() if m else None


def only_photo(sentence: str) -> bool:
    """The sentence is a shared photo and nothing else: what it shows is what was shared."""
    return bool(_PHOTO.search(sentence)) and not _PHOTO.sub("", sentence).strip(" .!")


_ENDS = ".!?。！？\n"  # what ends a sentence


def question_in(text: str) -> str | None:
    """The last question of a message ("What's your best camping memory?"), which the reply answers: from the
    end of the sentence before it to its question mark. Found from the end in linear time (a regex search
    retried at every position was quadratic on a long reply without punctuation)."""
    text = text or ""
    end = max(text.rfind("?"), text.rfind("？"))
    if end < 0:
        return None
    start = max(text.rfind(c, 0, end) for c in _ENDS)
    return text[start + 1:end + 1].strip()

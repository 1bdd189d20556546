"""Cue tables of the offline distill engine (issue 10): what people say outright, in English and Chinese.

Data only. Each table is a regular expression source; extract.py compiles them once per process. Patterns
match lower-cased English and raw Chinese. A cue alone never makes a card: extract.py first drops what is
asked, hedged, hypothetical, negated, quoted, narrated or pasted as code.
"""

from __future__ import annotations

# ------------------------------------------------------------------ what disqualifies a sentence

# Questions: a question mark, or an English sentence that opens like one. Chinese questions are caught by
# their mark or by the particles below.
QUESTION_EN = r"^(?:should|shall|what|how|why|is|are|do|does|did|can|could|would|which|when|where|who|whom|any)\b"
QUESTION_ZH = r"要不要|是不是|能不能|可不可以|会不会|怎么办|为什么|吗$|呢$"

# Hypotheticals: "what if", "如果…呢".
HYPOTHETICAL_EN = r"\b(?:if|hypothetically|suppose|supposing|imagine|in case|unless|would)\b"
HYPOTHETICAL_ZH = r"如果|要是|假如|假设|万一|的话呢"

# Hedges: not stated outright.
HEDGE_EN = (r"\b(?:maybe|perhaps|probably|possibly|might|not sure|unsure|i guess|i think we|i suppose|"
            r"at some point|eventually|thinking out loud|i'll think|i will think|not yet decided|tbd|"
            r"for now\?|kind of|sort of)\b")
HEDGE_ZH = r"可能|也许|或许|大概|还没想好|没想好|还没想清楚|不确定|再想想|看情况|再说吧|好像|说不定|考虑一下"

# A choice denied or left open: "I didn't say we'd go with X", "我没决定用 Redis", "还没定".
NEGATED_EN = (r"\b(?:didn't say|did not say|never said|haven't decided|have not decided|not decided|"
              r"didn't decide|did not decide|undecided|not going with|won't go with)\b")
NEGATED_ZH = r"没决定|还没定|没说要|没定|不是说要|并没有"

# Chit-chat markers: laughter and asides are not statements to keep.
CHITCHAT = r"\b(?:lol|lmao|haha+|hehe|brb)\b|哈哈|嘿嘿|累死了|😂|🤣"

# ------------------------------------------------------------------ what makes a card

# State changes with both the old and the new value. Named groups: subj (may be empty), old, new.
STATE_EN = (
    r"(?:(?P<subj>[\w' -]{0,40}?)\s*)?\b(?:moved|switched|migrated|changed|went|changing|moving|switching|"
    r"migrating|moves|switches|migrates|changes)\s+(?P<subj2>[\w' -]{0,40}?)\s*\bfrom\s+(?P<old>.+?)\s+"
    r"(?:to|over to)\s+(?P<new>.+)$",
    r"(?:(?P<subj>[\w' -]{0,40}?)\s*)?\b(?:replaced|swapped|replace|swap)\s+(?P<old>.+?)\s+(?:with|for)\s+"
    r"(?P<new>.+)$",
)
STATE_ZH = (
    # 不用 X 了，改用 Y / 不去 X 了，改去 Y / 不用三月底了，改成四月底…
    r"(?P<subj>[^，,。；;：:]{0,16}?)不(?:用|去|再用|要)\s*(?P<old>[^，,。；;]+?)\s*了\s*[，,、]?\s*"
    r"(?P<subj2>[^，,。；;：:]{0,12}?)(?:全部|都)?"
    r"(?:改用|改成|改去|换成|换到|改为|换用|改到)\s*(?P<new>.+)$",
    # 从 X 换成 Y / 从 X 迁到 Y
    r"(?P<subj>[^，,。；;：:]{0,16}?)从\s*(?P<old>[^，,。；;]+?)\s*(?:换成|改成|迁到|迁移到|搬到|换到|改为|切到|切换到)"
    r"\s*(?P<new>.+)$",
    # X 由 A 改为 B
    r"(?P<subj>[^，,。；;：:]{0,16}?)由\s*(?P<old>[^，,。；;]+?)\s*(?:改为|改成|换成)\s*(?P<new>.+)$",
)

RULE_EN = (r"\b(?:must|mustn't|must not|don't ever|do not ever|never ever|is forbidden|are forbidden|"
           r"not allowed|is required|are required|at most|at least|no more than|rule for|rule:|hard rule)\b")
# "never <verb>" as an imperative about the work (never push, never expose, never retry) is a rule; about
# answers to the person or their own habits it is a preference (see PREFERENCE_NEVER_EN).
RULE_NEVER_EN = r"^(?:and\s+|but\s+|also\s+)?never\b(?!\s+mind)"
# An evaluation is not a value: "… is too much work", "… is really slow".
EVALUATION_EN = r"^\s*(?:too|so|very|really|pretty|quite|kind of|a bit|not|way|super|getting|just)\b"
RULE_ZH = r"必须|禁止|不许|不准|不得|不能超过|不超过|至少|最多|一律|严禁|务必"

PREFERENCE_EN = (r"\b(?:i prefer|i'd prefer|i would prefer|i'd rather|i would rather|i like|i love|i hate|"
                 r"i dislike|i don't like|i do not like|my preference|i'm vegetarian|i am vegetarian|i'm vegan|"
                 r"i never|prefer)\b")
PREFERENCE_ALWAYS_EN = r"^(?:and\s+|also\s+|please\s+|pls\s+)?always\b"
# "never suggest / recommend / answer …": about what the person wants to get.
PREFERENCE_NEVER_EN = r"\bnever\s+(?:suggest|recommend|propose|offer|send|show|give|answer|reply|book)\b"
PREFERENCE_ZH = (r"我喜欢|我更喜欢|我比较喜欢|我不喜欢|我讨厌|偏好|我习惯|以后.{0,12}都|以后都|不要再|别再|"
                 r"以后回复|以后.{0,6}(?:用|写)")

DECISION_EN = (r"\b(?:we'll go with|we will go with|let's go with|lets go with|going with|we're going with|"
               r"let's use|lets use|we'll use|we will use|we decided|i decided|decided to|decided on|"
               r"that's decided|it's decided|is decided|it is$|we chose|i chose|we picked|settled on|"
               r"we're settling on|final answer|(?:we|i) go with|postponed to|pushed back to|rescheduled to|moved to)\b")
DECISION_ZH = r"^不(?:换|买|上|装|搬)\S{1,12}了$|推迟.{0,6}到|延期到|提前到|决定|定了|就用|就选|就叫|就按|那就|先用|先存|统一用|改用|改成|选定|确定用|就这么定"

# Facts: a subject with a value. Subject nouns that take a value; the value itself, or a verb of being.
FACT_NOUN_EN = (r"\b(?:ip|ips|ip address|address|port|url|uri|endpoint|host|hostname|domain|version|bucket|"
                r"region|path|directory|folder|dir|interval|window|timeout|account|email|username|user name|"
                r"id|key name|name|server|database|db|os|passport|birthday|deadline|budget|size|limit|"
                r"schedule|time|date|timezone|zone|cluster|namespace|branch|repo|repository|model|plan)\b")
FACT_VERB_EN = (r"\b(?:is|are|'s|was set to|is set to|runs|runs on|is running|listens on|lives at|"
                r"is at|is on|is under|expires on|expires|is hosted on|hosted on|we use|we're using|"
                r"we are using|uses|is using|is allergic to|am allergic to|i'm allergic to|is located in|"
                r"is set in|stays in|stay in|is generated by|goes in|go in)\b")
FACT_ZH_NOUN = (r"(?:端口|地址|域名|IP|ip|网址|版本|目录|路径|时间|型号|车|系统|宽带|账号|账户|邮箱|密钥名|"
                r"服务器|数据库|平台|工具|框架|语言|分支|仓库|生日|截止|预算|区域|机房|型号|名字|名称)")
FACT_ZH = (r"是|用的是|在用|过敏|现在在|跑一次|每天|每周|放在|存放在|部署在|装的")

# Explicit memory requests: the request words are removed and the rest is classified.
MEMORY_EN = r"^(?:please\s+)?(?:remember(?: that)?|note(?: that)?|fyi|for the record|keep in mind(?: that)?)\s*[:,-]?\s*"
MEMORY_TAIL_EN = r"[,;-]?\s*(?:remember that|note that(?: for [\w ]+)?|keep that in mind|please remember)\.?$"
MEMORY_ZH = r"^(?:请)?(?:记住|记一下|备注|注意)\s*[：:，,]?\s*"
MEMORY_TAIL_ZH = r"[，,]?\s*(?:这个)?(?:一定)?要?(?:记住|记一下|记好)了?[。！!]?$"

# A clause that only heads what follows ("Rule for the homelab:", "代码评审规则定一下：").
RULE_HEADER = r"^(?:(?:a |one |new |house |team |hard )?rules?\b.{0,40}|.{0,20}规则.{0,6})$"
# Headers that name the kind of what follows ("Decision: RQ + Redis", "One preference: no ORM").
KIND_HEADER = (r"^(?:(?:a|one|my|our|the|team|final|another)\s+)?(?P<kind>decision|preference|rule|fact)s?$|"
               r"^(?P<zh>决定|偏好|规则|结论)$")
# A clause that puts something off ("管理后台以后再说", "the rest we can tweak later"): no card, no reason.
DEFERRAL = r"以后再说|再说吧|下周再定|回头再说|later\.?$|another time"
# A clause that continues the previous statement ("…, so never suggest meat").
CONTINUES = r"^(?:so|and so|which means|所以|因此)\b"

# A sentence that only qualifies the statement before it: it makes no card of its own.
MARK_DECIDED = r"^(?:(?:that's|that is|it's|it is|this is|这个|那就)\s*)?(?:decided|final|定了|确定了)\b[^，,：:;；]{0,40}$"
MARK_RULE = r"^(?:that's|that is|it's|it is|this is)\s+(?:a\s+)?(?:hard\s+|strict\s+|firm\s+)?rule\b[^，,：:;；]{0,40}$"
# A clause that only contrasts the statement before it ("…, not a soldier", "…，不做 PDF").
CONTRAST = r"^(?:not|never)\s+(?:a|an|the|in|on|at|my|our)\b|^(?:不做|不是|不要|不在|而不是)"
# A fact given as "noun value" after another fact ("…, region eu-central-1", "…, port 8443").
NOUN_VALUE_EN = r"^(?:the\s+)?(?:region|port|zone|version|host|user|path|branch|bucket|ip|url|domain)\s+\S+$"

# Lead-ins stripped before a clause is judged ("ok cool. btw", "Update:", "对了").
LEAD_EN = (r"^(?:(?:ok|okay|yeah|yes|yep|sure|cool|great|alright|right|so|and|also|oh|btw|by the way|update|"
           r"quick context for later|context|fyi|anyway|hm+|well|thanks|one more thing)\s*[:,.!-]?\s*)+")
LEAD_ZH = r"^(?:(?:对了|好|好的|嗯|那|另外|还有|顺便说一下|补充一下|更新一下|更新|总之|其实)\s*[：:，,。]?\s*)+"

# Role-play: *narration* and OOC markers (only OOC text counts in a message that narrates).
NARRATION = r"\*[^*\n]{2,}\*"
OOC = r"(?:\(|（)?\s*OOC\s*[:：]\s*(?P<ooc>[^)）]*)"

# Words that are capitalised but name nothing.
NOT_NAMES = frozenset("""
    I I'm I'd I'll We We'll We're Let's Lets The A An And But Or So If Then Our My Your It It's This That These
    Those There Here Rule Update Note Remember Don't Never Always Please Also Ok OK Okay Yeah Yes No Thanks Hm
    Quick For Moved Switched Migrated Replaced Changed Her His Their They You What Why How Should Mixed Tuesdays
    Mondays Wednesdays Thursdays Fridays Saturdays Sundays Monday Tuesday Wednesday Thursday Friday Saturday
    Sunday January February March April May June July August September October November December UTC
""".split())

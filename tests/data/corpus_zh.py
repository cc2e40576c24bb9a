"""Chinese requests and conversation for the recognizer (see tests/unit/test_intents.py).

REQUESTS rows are (text, action, language, subject); subject ANY is not asserted. Everything in
CONVERSATION must stay conversation: a single hit there would store, delete or hide memory
nobody asked the bot to touch.
"""

from __future__ import annotations

from tests.data.corpus import Row

COMMANDS: list[Row] = [
    ("/remember 我喜欢喝茶", "remember", "zh", "我喜欢喝茶"),
    ("/forget@my_bot 我的旧地址", "forget", "zh", "我的旧地址"),
]


REMEMBER: list[Row] = [
    ("记住我喜欢喝茶", "remember", "zh", "我喜欢喝茶"),
    ("记住：我对花生过敏", "remember", "zh", "我对花生过敏"),
    ("记住：我喜欢茶，不喜欢咖啡。", "remember", "zh", "我喜欢茶，不喜欢咖啡"),
    ("请记住我的生日是五月五号", "remember", "zh", "我的生日是五月五号"),
    ("帮我记住我女儿叫小雨", "remember", "zh", "我女儿叫小雨"),
    ("记一下，明天下午三点开会", "remember", "zh", "明天下午三点开会"),
    ("记一下：周五交报告", "remember", "zh", "周五交报告"),
    ("记下：我的车牌是京A12345", "remember", "zh", "我的车牌是京A12345"),
    ("记下来：我每周三健身", "remember", "zh", "我每周三健身"),
    ("请记下我的护照号码是E1234567", "remember", "zh", "我的护照号码是E1234567"),
    ("请记下来：我女朋友叫小美", "remember", "zh", "我女朋友叫小美"),
    ("请帮我记一下：我的工号是8823", "remember", "zh", "我的工号是8823"),
    ("@my_bot 记住我喜欢喝茶", "remember", "zh", "我喜欢喝茶"),
    ("@my_bot，请记住我明天出差", "remember", "zh", "我明天出差"),
    ("你能帮我记住我的车停在B2吗？", "remember", "zh", "我的车停在B2"),
    ("可以请你记住我的邮箱是a@b.com吗", "remember", "zh", "我的邮箱是a@b.com"),
    ("我想让你记住我是素食者", "remember", "zh", "我是素食者"),
    ("记住这个：我妈妈的生日是十月一号", "remember", "zh", "我妈妈的生日是十月一号"),
    ("记住，我不喝酒", "remember", "zh", "我不喝酒"),
    ("记录一下：我的血型是O型", "remember", "zh", "我的血型是O型"),
    ("记好：我对青霉素过敏", "remember", "zh", "我对青霉素过敏"),
    ("记住我喜欢喝茶，谢谢！", "remember", "zh", "我喜欢喝茶"),
    ("记住我喜欢喝茶，好吗？", "remember", "zh", "我喜欢喝茶"),
    ("对了，记住我下个月搬家", "remember", "zh", "我下个月搬家"),
    ("please 记住我喜欢茶", "remember", "zh", "我喜欢茶"),
    ("麻烦你记住我住在三楼", "remember", "zh", "我住在三楼"),
    ("你记住，我周末不加班", "remember", "zh", "我周末不加班"),
]


DOUBLE_NEGATIVE: list[Row] = [
    ("别忘了我对花生过敏", "remember", "zh", "我对花生过敏"),
    ("别忘了：周末要给妈妈打电话", "remember", "zh", "周末要给妈妈打电话"),
    ("不要忘记我喜欢靠窗的座位", "remember", "zh", "我喜欢靠窗的座位"),
    ("千万别忘了我不吃香菜", "remember", "zh", "我不吃香菜"),
    ("別忘了：我下週出差", "remember", "zh", "我下週出差"),
]


TRADITIONAL: list[Row] = [
    ("記住我喜歡喝咖啡", "remember", "zh", "我喜歡喝咖啡"),
    ("請記住：我住在台北", "remember", "zh", "我住在台北"),
    ("幫我記住我兒子叫小明", "remember", "zh", "我兒子叫小明"),
    ("記下來：我的會員號是1234", "remember", "zh", "我的會員號是1234"),
    ("請忘記我的舊地址", "forget", "zh", "我的舊地址"),
    ("刪除關於我工作的記憶", "forget", "zh", "我工作"),
    ("把我剛才說的忘了吧", "forget", "zh", "我剛才說的"),
    ("關閉記憶", "disable", "zh", ""),
    ("請關掉記憶功能", "disable", "zh", ""),
    ("開啟記憶", "enable", "zh", ""),
    ("啟用記憶", "enable", "zh", ""),
]


FORGET: list[Row] = [
    ("忘记我住在北京", "forget", "zh", "我住在北京"),
    ("忘掉我刚才说的话", "forget", "zh", "我刚才说的话"),
    ("请忘记我的旧地址", "forget", "zh", "我的旧地址"),
    ("请忘了我之前的手机号", "forget", "zh", "我之前的手机号"),
    ("忘记关于我前任的事", "forget", "zh", "我前任的事"),
    ("忘记之前关于我搬家的消息", "forget", "zh", "之前关于我搬家的消息"),
    ("把我刚才说的忘了吧", "forget", "zh", "我刚才说的"),
    ("把我的旧地址忘掉", "forget", "zh", "我的旧地址"),
    ("请把关于我工作的事忘了", "forget", "zh", "我工作的事"),
    ("删除关于我工作的记忆", "forget", "zh", "我工作"),
    ("删除我工作相关的记忆", "forget", "zh", "我工作"),
    ("删掉关于我前女友的记忆", "forget", "zh", "我前女友"),
    ("删除关于我体重的所有记忆", "forget", "zh", "我体重"),
    ("从记忆中删除我的住址", "forget", "zh", "我的住址"),
    ("把我的住址从记忆里删掉", "forget", "zh", "我的住址"),
    ("@my_bot 忘掉我说过的关于工资的事", "forget", "zh", "我说过的关于工资的事"),
    ("帮我忘掉我之前说的生日", "forget", "zh", "我之前说的生日"),
    ("忘记我常去的酒吧", "forget", "zh", "我常去的酒吧"),
]


SWITCH: list[Row] = [
    ("关闭记忆", "disable", "zh", ""),
    ("关掉记忆功能", "disable", "zh", ""),
    ("停用记忆", "disable", "zh", ""),
    ("请关闭记忆", "disable", "zh", ""),
    ("把记忆关掉吧", "disable", "zh", ""),
    ("暂停记忆功能", "disable", "zh", ""),
    ("@my_bot 关闭记忆", "disable", "zh", ""),
    ("可以帮我关闭记忆吗？", "disable", "zh", ""),
    ("关闭记忆，谢谢", "disable", "zh", ""),
    ("开启记忆", "enable", "zh", ""),
    ("启用记忆", "enable", "zh", ""),
    ("打开记忆", "enable", "zh", ""),
    ("重新开启记忆功能", "enable", "zh", ""),
    ("请把记忆打开", "enable", "zh", ""),
    ("恢复记忆", "enable", "zh", ""),
]


WIDER: list[Row] = [
    ("请记得我明天要开会", "remember", "zh", "我明天要开会"),
    ("记得我不吃辣", "remember", "zh", "我不吃辣"),
    ("记得：我每周三健身", "remember", "zh", "我每周三健身"),
    ("记得哦，我对猫过敏", "remember", "zh", "我对猫过敏"),
    ("記得我不吃辣椒", "remember", "zh", "我不吃辣椒"),
    ("记得我常去的酒吧", "remember", "zh", "我常去的酒吧"),
    ("以后记住我不吃香菜", "remember", "zh", "我不吃香菜"),
    ("从现在开始，请记住我是素食者", "remember", "zh", "我是素食者"),
    ("今后记得我周末不加班", "remember", "zh", "我周末不加班"),
    ("你好，请记住我的生日是五月五号", "remember", "zh", "我的生日是五月五号"),
    ("嘿，记住我住在五楼", "remember", "zh", "我住在五楼"),
    ("机器人，记住我喜欢喝绿茶", "remember", "zh", "我喜欢喝绿茶"),
    ("早上好，记住我今天在家办公", "remember", "zh", "我今天在家办公"),
    ("把我的生日忘了", "forget", "zh", "我的生日"),
    ("把我说过的那件事忘了", "forget", "zh", "我说过的那件事"),
    ("忘了我说过的那件事", "forget", "zh", "我说过的那件事"),
    ("忘了我刚才跟你说的地址", "forget", "zh", "我刚才跟你说的地址"),
    ("请关闭这个话题的记忆", "disable", "zh", ""),
    ("关闭本群的记忆", "disable", "zh", ""),
    ("在这个话题里关闭记忆", "disable", "zh", ""),
    ("本群开启记忆", "enable", "zh", ""),
    ("打开这个话题的记忆功能", "enable", "zh", ""),
    ("请把这个群的记忆关掉", "disable", "zh", ""),
]


QUESTIONS: list[str] = [
    "你还记得我说过什么吗？",
    "你记得我说过什么吗",
    "你还记得我的生日吗",
    "如何关闭记忆？",
    "记忆开着吗？",
    "怎么开启记忆功能？",
    "你能记住我的名字吗？",
    "记住了吗？",
    "关闭记忆了吗？",
    "记忆功能怎么用",
    "你忘了我的生日吗？",
]


OWN_MEMORY: list[str] = [
    "我忘了带钥匙",
    "我记不住他的名字",
    "我不记得了",
    "忘了带伞，淋湿了",
    "忘记密码了怎么办",
    "忘记我的生日了",
    "记住了",
    "记下来了",
    "我记得你说过",
    "把我的钥匙忘了",
]


NEGATIVE_REQUESTS: list[str] = [
    "帮我忘掉烦恼",
    "请把烦恼忘掉吧",
    "请忘记时间",
    "请把绿茶忘了",
    "你能忘掉烦恼吗",
    "把烦恼忘掉吧",
    "请别忘了绿茶",
    "别忘了带钥匙",
    "記住要帶傘",
]


IDIOMS: list[str] = [
    "算了",
    "忘了吧",
    "忘了它吧",
    "把他忘了吧",
    "忘掉烦恼",
    "忘掉过去吧",
    "记住我",
    "记住记住记住",
]


OTHER_SWITCHES: list[str] = [
    "关闭通知",
    "开启飞行模式",
    "打开空调",
    "删除聊天记录",
    "删除这个文件",
    "删除记忆",
    "删除我的记忆",
    "删除关于我的记忆",
    "删除这条记忆",
]


MENTIONS_ONLY: list[str] = [
    "记住啦",
    "牢记使命",
    "这首歌叫《记住我》",
    "记忆力越来越差了",
    "记住这个词怎么写？",
    "记住",
    "记住：",
    "别忘了",
]


REPORTED_SPEECH: list[str] = [
    "妈妈说记住要早点回家",
    "他让我忘掉这件事",
    "老师说：记住这个公式",
]


WIDER_NONE: list[str] = [
    "记得带伞",
    "请记得带伞",
    "記得帶傘",
    "记得吗",
    "你还记得我吗",
    "你记得我的生日吗",
    "记得给我打电话",
    "记得我们那次去三亚",
    "记得我小时候住在乡下",
    "记得我们第一次见面的时候吗",
    "记得我不吃辣吧",
    "记得我喜欢吃辣吧？",
    "记得我说过的话",
    "你记得我说过我不吃辣",
    "我记得我不吃辣",
    "记得住我的名字吗",
    "记得清我的生日吗",
    "记得我啊",
    "记住我哦",
    "别忘了我啊",
    "以后记得带伞",
    "以后不要记住我说的话",
    "以后别忘了带钥匙",
    "以后我会记住的",
    "以后记住了",
    "从现在开始别记住任何东西",
    "你好，你还记得我吗",
    "嘿，别忘了带钥匙",
    "机器人，你还记得我吗",
    "早上好，记得带伞",
    "把我的伞忘了",
    "把我的手机忘了",
    "你把我的生日忘了",
    "他把我的生日忘了",
    "又把我的生日忘了",
    "把我的生日忘了？",
    "你忘了我说过的话",
    "我忘了我说过的话",
    "忘了我说过的话了",
    "忘了我的钥匙",
    "关闭这个话题",
    "关闭本群的通知",
    "在这个话题里关闭通知",
    "这个话题关闭记忆了吗",
    "本群关闭记忆了",
    "他说以后记住我不吃辣",
    "妈妈说记得带伞",
]

# Requests as people phrase them, and the conversation they must not swallow.
GROWN: list[Row] = [
    ("帮我记着：我对花生过敏", "remember", "zh", "我对花生过敏"),
    ("记着，我不吃辣", "remember", "zh", "我不吃辣"),
    ("記著：我不吃辣椒", "remember", "zh", "我不吃辣椒"),
    ("请牢记我对青霉素过敏", "remember", "zh", "我对青霉素过敏"),
    ("牢记：我的血型是A型", "remember", "zh", "我的血型是A型"),
    ("把这个记下来：我的车牌是京A12345", "remember", "zh", "我的车牌是京A12345"),
    ("把这个记住：我住在三楼", "remember", "zh", "我住在三楼"),
    ("把我的新地址记下来", "remember", "zh", "我的新地址"),
    ("记一笔：我借给小王500块", "remember", "zh", "我借给小王500块"),
    ("记录：我的血型是O型", "remember", "zh", "我的血型是O型"),
    ("保存到记忆：我的血型是A型", "remember", "zh", "我的血型是A型"),
    ("存到记忆里：我的会员号是1234", "remember", "zh", "我的会员号是1234"),
    ("添加到记忆：我每周三健身", "remember", "zh", "我每周三健身"),
    ("忘记掉我的旧地址", "forget", "zh", "我的旧地址"),
    ("把关于我前任的记忆删掉", "forget", "zh", "我前任"),
    ("暂时关闭记忆", "disable", "zh", ""),
    ("先关闭记忆", "disable", "zh", ""),
    ("先把记忆关了", "disable", "zh", ""),
    ("帮我把记忆关一下", "disable", "zh", ""),
    ("把记忆功能暂时关掉", "disable", "zh", ""),
    ("记忆关掉吧", "disable", "zh", ""),
    ("记忆先关掉", "disable", "zh", ""),
    ("记忆打开吧", "enable", "zh", ""),
]

GROWN_NONE: list[str] = [
    "你给我记着",
    "记着点",
    "记着带伞",
    "牢记历史",
    "牢记这个教训",
    "把单词记住",
    "把我说的话记住",
    "把这个记住",
    "把这个记下来",
    "把我的钥匙记下来吗",
    "记忆关了",
    "记忆关了吗",
    "记忆关掉了",
    "先关灯",
    "保存文件",
    "存到相册里",
    "把关于他的记忆删掉",
    "记一笔账",
    "记录一下",
    "你记着我说过的话",
    "暂时关闭通知",
    "记忆打开了吗",
    "他把记忆关掉了",
]

# Requests as people phrase them: stop + a verb of keeping, a modal, no longer keeping.
PHRASED: list[Row] = [
    ("你必须记住我喜欢绿茶", "remember", "zh", "我喜欢绿茶"),
    ("你应该记住我住在上海", "remember", "zh", "我住在上海"),
    ("一定要记住我对花生过敏", "remember", "zh", "我对花生过敏"),
    ("不要再记着我的地址了", "forget", "zh", "我的地址"),
    ("别再记住我的生日了", "forget", "zh", "我的生日"),
    ("不用再记得我的电话了", "forget", "zh", "我的电话"),
]
PHRASED_NONE: list[str] = [
    "你应该记住这个吗？",
    "别再记着这件事了",
    "别再记着我了",
    "我必须记住带钥匙",
]

# Requests not to remember: the message replied to or the speaker's previous one (subject ""),
# or, when the request opens the message, what the message itself says.
KEEP_OUT: list[Row] = [
    ("别记这个", "keep_out", "zh", ""),
    ("别记住这个", "keep_out", "zh", ""),
    ("不要记住", "keep_out", "zh", ""),
    ("不用记", "keep_out", "zh", ""),
    ("别记了", "keep_out", "zh", ""),
    ("别记下来", "keep_out", "zh", ""),
    ("不要记住我的地址", "keep_out", "zh", ""),
    ("不要把我的电话记下来", "keep_out", "zh", ""),
    ("这个不要记", "keep_out", "zh", ""),
    ("这个别记了", "keep_out", "zh", ""),
    ("这个不用记住了", "keep_out", "zh", ""),
    ("这条不要存", "keep_out", "zh", ""),
    ("这些别记", "keep_out", "zh", ""),
    ("那条别记了", "keep_out", "zh", ""),
    ("这句话别记", "keep_out", "zh", ""),
    ("刚才那句别记", "keep_out", "zh", ""),
    ("刚才说的不要记", "keep_out", "zh", ""),
    ("我刚才说的别记下来", "keep_out", "zh", ""),
    ("上面的内容不要保存", "keep_out", "zh", ""),
    ("我的工资不要记", "keep_out", "zh", ""),
    ("别把这个记下来", "keep_out", "zh", ""),
    ("不要把这些记住", "keep_out", "zh", ""),
    ("不要记录这个", "keep_out", "zh", ""),
    ("不用记录", "keep_out", "zh", ""),
    ("别存这个", "keep_out", "zh", ""),
    ("这个别存", "keep_out", "zh", ""),
    ("不要放进记忆", "keep_out", "zh", ""),
    ("别存到记忆里", "keep_out", "zh", ""),
    ("这个不要存进记忆", "keep_out", "zh", ""),
    ("无需记住这个", "keep_out", "zh", ""),
    ("你别记这个", "keep_out", "zh", ""),
    ("你不用记住这个", "keep_out", "zh", ""),
    ("千万别记这个", "keep_out", "zh", ""),
    ("请不要记住这个", "keep_out", "zh", ""),
    ("请勿记录", "keep_out", "zh", ""),
    ("麻烦别记这个", "keep_out", "zh", ""),
    ("我不想让你记住这个", "keep_out", "zh", ""),
    ("我不希望你保存这些", "keep_out", "zh", ""),
    ("不要记住这个好吗", "keep_out", "zh", ""),
    ("别记这个，没什么", "keep_out", "zh", ""),
    ("别记这个，我只是随便说说", "keep_out", "zh", ""),
    ("@memory_test_bot 别记这个", "keep_out", "zh", ""),
    ("机器人，这个不要记", "keep_out", "zh", ""),
    ("嗯，别记这个", "keep_out", "zh", ""),
    ("好的，不要记", "keep_out", "zh", ""),
    ("別記這個", "keep_out", "zh", ""),
    ("這個不要記", "keep_out", "zh", ""),
    ("這句話別記", "keep_out", "zh", ""),
    ("这是隐私，别记", "keep_out", "zh", ""),
    ("这是我的隐私，不要保存", "keep_out", "zh", ""),
    ("私事，别记下来", "keep_out", "zh", ""),
    ("这是秘密，不要记住", "keep_out", "zh", ""),
    ("这是私人信息，请不要记录", "keep_out", "zh", ""),
    ("這是隱私，別記", "keep_out", "zh", ""),
    ("以下不要记：我的工资是五千", "keep_out", "zh", "我的工资是五千"),
    ("不要记：我下周要去面试", "keep_out", "zh", "我下周要去面试"),
    ("下面的内容别记：我在看心理医生", "keep_out", "zh", "我在看心理医生"),
    ("请不要记录：我的密码是1234", "keep_out", "zh", "我的密码是1234"),
    ("这个你别记", "keep_out", "zh", ""),
    ("这个就别记了", "keep_out", "zh", ""),
    ("别记录我刚才说的", "keep_out", "zh", ""),
    ("不要记下我的电话号码", "keep_out", "zh", ""),
    ("刚才的不要记", "keep_out", "zh", ""),
    ("请不要保存这条消息", "keep_out", "zh", ""),
    ("这些内容别记", "keep_out", "zh", ""),
    ("那件事别记了", "keep_out", "zh", ""),
    ("这个消息别存", "keep_out", "zh", ""),
    ("能不能别记这个", "keep_out", "zh", ""),
    ("你可以不要记住这个吗", "keep_out", "zh", ""),
]

# Statements, questions, quotes and idioms near those: ordinary messages.
KEEP_OUT_NONE: list[str] = [
    "我不记得这个",
    "不记得这个了",
    "你不记得这个吗？",
    "你为什么不记得这个？",
    "你还记得这个吗",
    "我记不住这个",
    "这个我记不住",
    "我不用记这个",
    "别记错了",
    "不要记错时间",
    "这个不要记错",
    "别记仇",
    "不要记恨他",
    "别记在心上",
    "别记挂我",
    "他说别记这个",
    "妈妈说不要记住坏事",
    "“别记这个”是什么意思",
    "别记住这个公式",
    "不用记住这些单词",
    "不要存钱",
    "别存疑",
    "不要保存文件",
    "这个不要记吗？",
    "这是我的秘密",
    "这是隐私",
    "这是隐私，别告诉别人",
    "不要记住我",
    "别记这个吗",
    "别记得那么清楚",
    "不要记住仇恨",
    "别存这么多钱",
    "不用记得我",
    "这个消息不要记错",
    "我记得这个",
    "他不记得这个",
    "我都不记得这个了",
    "为什么不记这个？",
    "要不要记这个？",
    "他说：“别记这个”",
    "你能记住这个吗",
]

REQUESTS: list[Row] = (
    COMMANDS
    + REMEMBER
    + DOUBLE_NEGATIVE
    + TRADITIONAL
    + FORGET
    + SWITCH
    + WIDER
    + GROWN
    + PHRASED
    + KEEP_OUT
)
CONVERSATION: list[str] = (
    QUESTIONS
    + PHRASED_NONE
    + OWN_MEMORY
    + NEGATIVE_REQUESTS
    + IDIOMS
    + OTHER_SWITCHES
    + MENTIONS_ONLY
    + REPORTED_SPEECH
    + WIDER_NONE
    + GROWN_NONE
    + KEEP_OUT_NONE
)

"""Table-driven tests for the direct memory-request recogniser.

Positive rows assert action, language and (unless ``ANY``) the exact subject.
The None rows are the false-positive guard: a single hit there means the bot
would store, delete or hide memory nobody asked it to touch.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_memory.intents import MemoryRequest, recognize

ANY = object()  # subject not asserted for this row

# (text, action, language, subject)
REMEMBER_EN = [
    ("remember that I prefer tea", "remember", "en", "I prefer tea"),
    ("Remember that my birthday is on May 5.", "remember", "en", "my birthday is on May 5"),
    (
        "remember: my wife is allergic to peanuts",
        "remember",
        "en",
        "my wife is allergic to peanuts",
    ),
    ("Remember - the wifi password is hunter2", "remember", "en", "the wifi password is hunter2"),
    ("please remember that I work night shifts", "remember", "en", "I work night shifts"),
    ("Please remember I'm vegetarian", "remember", "en", "I'm vegetarian"),
    ("pls remember my shoe size is 43", "remember", "en", "my shoe size is 43"),
    ("kindly remember that we bill in euros", "remember", "en", "we bill in euros"),
    ("could you please remember that I prefer tea?", "remember", "en", "I prefer tea"),
    ("Could you remember that I prefer tea?", "remember", "en", "I prefer tea"),
    ("can you remember that our standup is at 9:30", "remember", "en", "our standup is at 9:30"),
    ("can you please remember my son's name is Leo", "remember", "en", "my son's name is Leo"),
    ("would you remember that I live in Berlin", "remember", "en", "I live in Berlin"),
    ("will you please remember: I'm off on Fridays", "remember", "en", "I'm off on Fridays"),
    ("keep in mind that I'm left-handed", "remember", "en", "I'm left-handed"),
    ("Keep in mind: we deploy on Fridays", "remember", "en", "we deploy on Fridays"),
    ("please keep in mind I don't eat pork", "remember", "en", "I don't eat pork"),
    ("keep this in mind: my manager is Priya", "remember", "en", "my manager is Priya"),
    ("bear in mind that my flight lands at 6", "remember", "en", "my flight lands at 6"),
    (
        "make a note that the office moves to Oak Street in June",
        "remember",
        "en",
        "the office moves to Oak Street in June",
    ),
    (
        "Make a note: dentist appointment on the 14th",
        "remember",
        "en",
        "dentist appointment on the 14th",
    ),
    (
        "make a note of my new phone number, 555-0100",
        "remember",
        "en",
        "my new phone number, 555-0100",
    ),
    ("take a note that I switched teams", "remember", "en", "I switched teams"),
    ("note that I'm on vacation next week", "remember", "en", "I'm on vacation next week"),
    ("Note down my locker code: 4412", "remember", "en", "my locker code: 4412"),
    ("memorize that my employee id is 88231", "remember", "en", "my employee id is 88231"),
    ("memorise: the garage code is 2580", "remember", "en", "the garage code is 2580"),
    ("remember this: my car is a blue Civic", "remember", "en", "my car is a blue Civic"),
    ("remember the following: I take my coffee black", "remember", "en", "I take my coffee black"),
    ("REMEMBER THAT I HATE MONDAYS", "remember", "en", "I HATE MONDAYS"),
    ("remember that I like tea, please", "remember", "en", "I like tea"),
    ("remember that I like tea please", "remember", "en", "I like tea"),
    ("remember that I like tea, thanks!", "remember", "en", "I like tea"),
    ("remember that I like green tea, ok?", "remember", "en", "I like green tea"),
    (
        "hey, remember that I'm moving to Lisbon in May",
        "remember",
        "en",
        "I'm moving to Lisbon in May",
    ),
    ("also remember that my daughter's school ends at 3pm", "remember", "en", ANY),
    ("ok remember that the standup moved to 10", "remember", "en", "the standup moved to 10"),
    ("save to memory: my blood type is O+", "remember", "en", "my blood type is O+"),
    ("add to your memory that I speak Portuguese", "remember", "en", "I speak Portuguese"),
    ("remember,  I'm allergic to cats", "remember", "en", "I'm allergic to cats"),
    ("  remember that I use vim  ", "remember", "en", "I use vim"),
    ("remember that\nI prefer aisle seats", "remember", "en", "I prefer aisle seats"),
    ("remember that my email is bob@example.com.", "remember", "en", "my email is bob@example.com"),
    ("remember：I prefer window seats", "remember", "en", "I prefer window seats"),
    ("please remember that I like tea？", "remember", "en", "I like tea"),
    ("remember we celebrate Christmas on January 7", "remember", "en", ANY),
    ("remember our wifi name is Skynet", "remember", "en", "our wifi name is Skynet"),
    ("remember that the server restarts every Sunday at 2am", "remember", "en", ANY),
    ("remember my wife's name is Anna", "remember", "en", "my wife's name is Anna"),
]

DOUBLE_NEGATIVE_EN = [
    ("don't forget that I'm allergic to shellfish", "remember", "en", "I'm allergic to shellfish"),
    (
        "do not forget: my passport expires in March",
        "remember",
        "en",
        "my passport expires in March",
    ),
    ("Don’t forget that Anna prefers email", "remember", "en", "Anna prefers email"),
    ("dont forget that we moved the retro to Thursday", "remember", "en", ANY),
    ("please don't forget that I'm diabetic", "remember", "en", "I'm diabetic"),
]

MENTION_EN = [
    (
        "@my_bot remember that I'm allergic to penicillin",
        "remember",
        "en",
        "I'm allergic to penicillin",
    ),
    (
        "@my_bot, please remember my partner is called Sam",
        "remember",
        "en",
        "my partner is called Sam",
    ),
    ("@helper_bot: remember: the meeting room is B12", "remember", "en", "the meeting room is B12"),
    ("@my_bot forget that I mentioned my salary", "forget", "en", "I mentioned my salary"),
    ("@my_bot turn off the memory feature", "disable", "en", ""),
    ("@my_bot memory off", "disable", "en", ""),
    ("hey @my_bot remember that I'm a night owl", "remember", "en", "I'm a night owl"),
    ("I want you to remember that I hate cilantro", "remember", "en", "I hate cilantro"),
    ("I'd like you to remember that I'm a night owl", "remember", "en", "I'm a night owl"),
    ("I need you to forget my home address", "forget", "en", "my home address"),
]

COMMANDS = [
    ("/remember I prefer tea", "remember", "en", "I prefer tea"),
    ("/remember@my_bot my size is M", "remember", "en", "my size is M"),
    ("/remember: my flight is BA117.", "remember", "en", "my flight is BA117"),
    ("/forget my old address", "forget", "en", "my old address"),
    ("/forget@my_bot the wifi password", "forget", "en", "the wifi password"),
    ("/memory_on", "enable", "en", ""),
    ("/memory_off", "disable", "en", ""),
    ("/memory_off@my_bot", "disable", "en", ""),
    ("/memory_on@my_bot please", "enable", "en", ""),
    ("@my_bot /remember I like jazz", "remember", "en", "I like jazz"),
    # A command has no language of its own: the argument decides.
    ("/remember 我喜欢喝茶", "remember", "zh", "我喜欢喝茶"),
    ("/forget@my_bot 我的旧地址", "forget", "zh", "我的旧地址"),
]

FORGET_EN = [
    ("forget that I live in Paris", "forget", "en", "I live in Paris"),
    ("forget what I said about my job", "forget", "en", "what I said about my job"),
    ("forget what I told you about Alex", "forget", "en", "what I told you about Alex"),
    ("forget what I said", "forget", "en", "what I said"),
    ("please forget my old address", "forget", "en", "my old address"),
    ("forget about my ex", "forget", "en", "my ex"),
    ("please forget about my old job", "forget", "en", "my old job"),
    (
        "Forget everything I told you about my health",
        "forget",
        "en",
        "everything I told you about my health",
    ),
    ("forget everything you know about me", "forget", "en", "everything you know about me"),
    ("forget the address I gave you yesterday", "forget", "en", "the address I gave you yesterday"),
    ("forget the fact that I smoke", "forget", "en", "the fact that I smoke"),
    ("could you forget my previous phone number?", "forget", "en", "my previous phone number"),
    ("forget: my old locker code", "forget", "en", "my old locker code"),
    ("Forget that I said I'd quit smoking", "forget", "en", "I said I'd quit smoking"),
    ("forget that I'm on a diet", "forget", "en", "I'm on a diet"),
    ("forget that we ship v2 on Friday", "forget", "en", "we ship v2 on Friday"),
    ("delete the memory about my job", "forget", "en", "my job"),
    ("remove the memory of my old phone number", "forget", "en", "my old phone number"),
    ("delete memories about my ex", "forget", "en", "my ex"),
    ("delete the memory that I live in Paris", "forget", "en", "I live in Paris"),
    ("erase my address from memory", "forget", "en", "my address"),
    ("erase my address from your memory, please", "forget", "en", "my address"),
    ("remove my birthday from your memory", "forget", "en", "my birthday"),
    ("delete what you know about my family", "forget", "en", "what you know about my family"),
    ("remove everything you know about me", "forget", "en", "everything you know about me"),
    ("clear your memory about my travel plans", "forget", "en", "my travel plans"),
]

SWITCH_EN = [
    ("turn off memory", "disable", "en", ""),
    ("Turn off your memory please", "disable", "en", ""),
    ("disable memory", "disable", "en", ""),
    ("disable memory in this chat", "disable", "en", ""),
    ("stop remembering", "disable", "en", ""),
    ("stop remembering things about me", "disable", "en", ""),
    ("turn memory off", "disable", "en", ""),
    ("switch off memory", "disable", "en", ""),
    ("pause memory for now", "disable", "en", ""),
    ("could you turn off memory?", "disable", "en", ""),
    ("please disable memory.", "disable", "en", ""),
    ("turn off memory, thanks", "disable", "en", ""),
    ("turn on memory", "enable", "en", ""),
    ("enable memory", "enable", "en", ""),
    ("turn memory back on", "enable", "en", ""),
    ("start remembering again", "enable", "en", ""),
    ("switch memory on", "enable", "en", ""),
    ("resume memory", "enable", "en", ""),
    ("re-enable memory please", "enable", "en", ""),
    ("can you turn memory back on?", "enable", "en", ""),
    ("TURN ON MEMORY", "enable", "en", ""),
]

REMEMBER_ZH = [
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

DOUBLE_NEGATIVE_ZH = [
    ("别忘了我对花生过敏", "remember", "zh", "我对花生过敏"),
    ("别忘了：周末要给妈妈打电话", "remember", "zh", "周末要给妈妈打电话"),
    ("不要忘记我喜欢靠窗的座位", "remember", "zh", "我喜欢靠窗的座位"),
    ("千万别忘了我不吃香菜", "remember", "zh", "我不吃香菜"),
    ("別忘了：我下週出差", "remember", "zh", "我下週出差"),
]

TRADITIONAL_ZH = [
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

FORGET_ZH = [
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

SWITCH_ZH = [
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

# Issue 8: greetings, time adverbials, 记得, "stop remembering", 把…忘了, "/memory on",
# and switches that name the topic or chat.
WIDER_EN = [
    ("hey bot, remember that my cat is Mochi", "remember", "en", "my cat is Mochi"),
    ("hi, please remember I'm allergic to latex", "remember", "en", "I'm allergic to latex"),
    ("Hello bot! Remember that I take the 7:40 train", "remember", "en", "I take the 7:40 train"),
    ("good morning, please remember that I'm out today", "remember", "en", "I'm out today"),
    ("bot, remember that my sister is called Mei", "remember", "en", "my sister is called Mei"),
    ("hey @my_bot, remember: my locker is 17", "remember", "en", "my locker is 17"),
    ("yo bot, forget my old address", "forget", "en", "my old address"),
    ("from now on remember that I'm vegan", "remember", "en", "I'm vegan"),
    ("From now on, please remember that I work remotely", "remember", "en", "I work remotely"),
    ("going forward, remember that our standup is at 10", "remember", "en", "our standup is at 10"),
    (
        "for future reference, remember my employee id is 4471",
        "remember",
        "en",
        "my employee id is 4471",
    ),
    ("in the future, keep in mind that I'm left-handed", "remember", "en", "I'm left-handed"),
    ("remove that memory about my ex", "forget", "en", "my ex"),
    ("delete this memory about my old job", "forget", "en", "my old job"),
    ("remove the memory you have about my address", "forget", "en", "my address"),
    ("stop remembering my address", "forget", "en", "my address"),
    ("please stop remembering my location", "forget", "en", "my location"),
    ("stop remembering that I smoke", "forget", "en", "I smoke"),
    (
        "stop remembering what I told you about my job",
        "forget",
        "en",
        "what I told you about my job",
    ),
    ("stop remembering everything I say", "disable", "en", ""),
    ("/memory on", "enable", "en", ""),
    ("/memory off", "disable", "en", ""),
    ("/memory@my_bot off", "disable", "en", ""),
    ("/memory on please", "enable", "en", ""),
    ("/memory off for this topic", "disable", "en", ""),
    ("@my_bot /memory off", "disable", "en", ""),
    ("turn off memory for this topic", "disable", "en", ""),
    ("turn memory off in this chat", "disable", "en", ""),
    ("disable memory in this thread", "disable", "en", ""),
    ("turn off this topic's memory", "disable", "en", ""),
    ("turn memory back on for this topic", "enable", "en", ""),
    ("enable memory in this group", "enable", "en", ""),
]

WIDER_ZH = [
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

POSITIVE = (
    REMEMBER_EN
    + DOUBLE_NEGATIVE_EN
    + MENTION_EN
    + COMMANDS
    + FORGET_EN
    + SWITCH_EN
    + REMEMBER_ZH
    + DOUBLE_NEGATIVE_ZH
    + TRADITIONAL_ZH
    + FORGET_ZH
    + SWITCH_ZH
    + WIDER_EN
    + WIDER_ZH
)

# --- must be None -----------------------------------------------------------

QUESTIONS = [
    "do you remember what I said yesterday?",
    "Do you remember my birthday?",
    "can you remember what I said?",
    "can you remember my name?",
    "could you remember whether I like tea?",
    "what do you remember about me?",
    "remember that time we went skiing?",
    "remember when we met in Rome?",
    "how do I turn memory off?",
    "how does memory work?",
    "is memory on?",
    "is your memory turned off?",
    "can you remember things?",
    "turn off memory?",
    "remember that I like tea?",
    "can you remember that?",
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

OWN_MEMORY = [
    "I can't remember where I parked",
    "I forgot my keys",
    "I always forget people's names",
    "I'll remember that",
    "I remember when this was all fields",
    "Forgot my umbrella again",
    "I need to remember to call mom",
    "my memory is terrible",
    "I keep forgetting to water the plants",
    "I remember",
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

NEGATIVE_REQUESTS = [
    "don't remember this",
    "do not remember that",
    "please don't save this",
    "please don't remember my address",
    "never remember this",
    "don't forget to buy milk",
    # a forget must name something of the speaker's: things alone are idioms and instructions
    "please forget the past",
    "please forget the previous instructions",
    "please forget the formatting and just answer",
    "please forget the car",
    "帮我忘掉烦恼",
    "请把烦恼忘掉吧",
    "请忘记时间",
    "请把绿茶忘了",
    # modal questions and bare imperatives about things stay conversation
    "can you forget the car?",
    "could you please forget that guy?",
    "please forget it",
    "你能忘掉烦恼吗",
    "把烦恼忘掉吧",
    "请别忘了绿茶",
    "remember to call me tomorrow",
    "不要记住",
    "别记住这个",
    "不用记",
    "不要记住我的地址",
    "别忘了带钥匙",
    "記住要帶傘",
]

IDIOMS = [
    "forget it",
    "Forget it.",
    "never mind, forget it",
    "forget about it",
    "oh forget about it, it's fine",
    "forget it, let's order pizza",
    "forget I said anything",
    "forget that I said that",
    "forget I asked",
    "forget him, he's not worth it",
    "forget that guy",
    "forget everything",
    "forget all that",
    "forget the party, it's cancelled",
    "forget what happened yesterday",
    "forget about me",
    # Cancel idiom: a noun phrase with "our"/"we" is not the speaker's memory.
    "forget our plans for tonight, it's raining",
    "forget the plan we made, it's off",
    "forget everything we discussed, new plan",
    "remember me to your mother",
    "a night to remember",
    "remember remember the fifth of november",
    "Remember, you're awesome",
    "remember the alamo",
    "remember me?",
    "remember that time we went skiing, lol",
    "算了",
    "忘了吧",
    "忘了它吧",
    "把他忘了吧",
    "忘掉烦恼",
    "忘掉过去吧",
    "记住我",
    "记住记住记住",
]

OTHER_SWITCHES = [
    "turn off the lights",
    "disable notifications",
    "turn on the heater",
    "switch off the TV",
    "turn off memory leak detection in the profiler",
    "disable memory swapping on the server",
    "pause the music",
    "enable dark mode",
    "delete the memory leak fix branch",
    "remove the memory card",
    "delete all memories",
    "clear memory",
    "delete memories about me",
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

MENTIONS_ONLY = [
    "the word remember has 8 letters",
    "I read a book called Remember Me",
    "memory leaks are bad",
    "he said 'remember that'",
    '"remember that" is a weird phrase',
    "'Forget it' is my favorite song",
    "Remembering things is hard",
    "forget-me-nots are blue",
    "remember-me checkbox is broken",
    "note that down",
    "make a note of that",
    "记住啦",
    "牢记使命",
    "Note to self: buy milk",
    "Note: the build is broken",
    "the notebook is on the desk",
    "keep that in mind",
    "keep in mind",
    "Memory is a funny thing",
    "这首歌叫《记住我》",
    "记忆力越来越差了",
    "记住这个词怎么写？",
    "remember",
    "remember that",
    "remember that!",
    "remember this",
    "please remember",
    "forget",
    "/forget",
    "/remember",
    "/remember@my_bot",
    "/start",
    "记住",
    "记住：",
    "别忘了",
    "",
    "   ",
    "hello there",
]

REPORTED_SPEECH = [
    "she told me to remember that the store closes at 8",
    "my boss said forget it",
    "He keeps saying 'turn off memory'",
    "my teacher said to remember that",
    "they asked the bot to forget my address",
    "妈妈说记住要早点回家",
    "他让我忘掉这件事",
    "老师说：记住这个公式",
]

# The false-trigger guard for WIDER_EN / WIDER_ZH: each new form, and what it
# must not swallow.
WIDER_NONE_EN = [
    # greetings and addressing: only the request after them counts
    "hey bot, do you remember my birthday?",
    "hi, remember me?",
    "hello, I can't remember my password",
    "hey bot, remember to ping me tomorrow",
    "hey guys, remember that the meeting moved to 5",
    "hey Anna, remember that I'm vegan",
    "bot, don't remember this",
    "good morning! forget it, the build is fine",
    "hi bot, turn off the lights",
    "yo, remember when we went to Rome?",
    "hey bot, remember that time we went skiing",
    # time adverbials
    "from now on remember to lock the door",
    "from now on I'll remember your name",
    "from now on, don't remember anything I say",
    "going forward, remember to update the changelog",
    "in the future, turn off the lights when you leave",
    "for future reference, the wifi password is on the fridge",
    # "remove that memory ..."
    "remove that memory card from the camera",
    "delete that memory leak workaround",
    "remove that memory about me",
    "I want to remove that memory about my ex from my head",
    # "stop remembering ..."
    "stop remembering the past",
    "stop remembering me",
    "I can't stop remembering my ex",
    "stop remembering that guy",
    "stop remembering our fights",
    "don't stop remembering my birthday",
    "stop remembering my address?",
    "stop remembering everything we discussed, new plan",
    # "/memory ..."
    "/memory",
    "/memory status",
    "/memory on or off?",
    "/memory offline",
    # switches naming a place
    "turn off notifications for this topic",
    "close this topic",
    "how do I turn off memory in this topic?",
    "turn off the lights in this chat",
    "mute this thread",
    "turn off memory for this topic?",
    "disable memory swapping for this thread",
    # reported speech
    "she said to turn off memory for this topic",
    "she told me from now on remember that I'm the boss",
    "he said hey bot, remember that I'm vegan",
]

WIDER_NONE_ZH = [
    # 记得: reminders, questions, reminiscing, statements about the bot
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
    # time adverbials and greetings
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
    # 把…忘了 / 忘了…: things left behind, complaints, statements
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
    # switches naming a place
    "关闭这个话题",
    "关闭本群的通知",
    "在这个话题里关闭通知",
    "这个话题关闭记忆了吗",
    "本群关闭记忆了",
    # reported speech
    "他说以后记住我不吃辣",
    "妈妈说记得带伞",
]

NONE_CASES = (
    QUESTIONS
    + OWN_MEMORY
    + NEGATIVE_REQUESTS
    + IDIOMS
    + OTHER_SWITCHES
    + MENTIONS_ONLY
    + REPORTED_SPEECH
    + WIDER_NONE_EN
    + WIDER_NONE_ZH
)

# (text, quoted, forwarded): otherwise-valid requests that are not the sender's own.
NOT_OWN_MESSAGE = [
    ("remember that I prefer tea", True, False),
    ("forget what I said about my job", False, True),
    ("/remember I like tea", True, False),
    ("/memory_off", False, True),
    ("turn off memory", False, True),
    ("记住我喜欢喝茶", True, False),
    ("关闭记忆", False, True),
    ("删除关于我工作的记忆", True, True),
    ("hey bot, remember that my cat is Mochi", True, False),
    ("stop remembering my address", False, True),
    ("/memory off", False, True),
    ("记得我不吃辣", True, False),
    ("把我的生日忘了", False, True),
    ("请关闭这个话题的记忆", True, False),
]


def test_corpus_size() -> None:
    none_total = len(NONE_CASES) + len(NOT_OWN_MESSAGE)
    assert len(POSITIVE) + none_total >= 200
    assert none_total >= 80
    # Every widening brings at least as many false-trigger guards, per language.
    assert len(WIDER_NONE_EN) >= len(WIDER_EN)
    assert len(WIDER_NONE_ZH) >= len(WIDER_ZH)
    texts = [row[0] for row in POSITIVE] + NONE_CASES
    assert len(texts) == len(set(texts)), "duplicate phrasing in the corpus"


@pytest.mark.parametrize(("text", "action", "language", "subject"), POSITIVE)
def test_recognised(text: str, action: str, language: str, subject: object) -> None:
    result = recognize(text)
    assert result is not None, text
    assert (result.action, result.language) == (action, language)
    if subject is not ANY:
        assert result.subject == subject


@pytest.mark.parametrize("text", NONE_CASES)
def test_not_a_request(text: str) -> None:
    assert recognize(text) is None


@pytest.mark.parametrize(("text", "quoted", "forwarded"), NOT_OWN_MESSAGE)
def test_quoted_or_forwarded_is_never_a_request(text: str, quoted: bool, forwarded: bool) -> None:
    assert recognize(text) is not None  # the same text would count on its own
    assert recognize(text, quoted=quoted, forwarded=forwarded) is None


def test_subject_keeps_the_full_remainder() -> None:
    body = "my notes: " + "x" * 5000 + " end"
    result = recognize("remember that " + body + ".")
    assert result == MemoryRequest("remember", "en", body)
    zh_body = "我喜欢茶，" * 1000 + "完"
    assert recognize("请记住" + zh_body) == MemoryRequest("remember", "zh", zh_body)


def test_request_is_frozen() -> None:
    result = recognize("turn off memory")
    assert result == MemoryRequest("disable", "en", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.action = "enable"  # type: ignore[misc]


ADVERSARIAL = {
    "remember*": "remember " * 12_000,
    "remember that + ?": "remember that " + "?" * 100_000,
    "spaces + trigger": " " * 100_000 + "remember that x",
    "trigger + spaces": "remember" + " " * 100_000,
    "trigger + commas": "remember" + " ," * 50_000,
    "mention": "@" + "a" * 100_000,
    "please*": "please " * 15_000,
    "forget that*": "forget that " * 9_000,
    "记住*": "记住" * 50_000,
    "忘记我*": "忘记我" * 33_000,
    "把*": "把" * 100_000,
    "删除 的* 记忆": "删除" + "的" * 100_000 + "记忆",
    "turn off the*": "turn off " + "the " * 25_000 + "memory",
    "delete x* from memory": "delete " + "x " * 50_000 + "from memory",
    "zh request": "请记住" + "我喜欢茶，" * 20_000,
    "tail junk": "remember that I like tea" + ", please" * 12_000,
    "吗*": "记住" + "吗" * 100_000,
    "hey bot*": "hey bot, " * 12_000 + "remember that x",
    "from now on*": "from now on " * 9_000,
    "stop remembering*": "stop remembering " * 6_000,
    "stop remembering my*": "stop remembering " + "my " * 30_000,
    "/memory + spaces": "/memory" + " " * 100_000 + "on",
    "/memory on + tail": "/memory on " + "for this topic " * 7_000,
    "以后*": "以后" * 50_000,
    "记得我*": "记得我" * 33_000,
    "记得 + 我*": "记得" + "我" * 100_000,
    "把 我的* 忘了": "把" + "我的" * 50_000 + "忘了",
    "忘了我说过的*": "忘了我说过的" * 16_000,
    "这个话题的*": "关闭" + "这个话题的" * 20_000 + "记忆",
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_input_is_linear(text: str) -> None:
    # Generous bound: catches catastrophic backtracking, not a benchmark.
    started = time.perf_counter()
    recognize(text)
    assert time.perf_counter() - started < 1.0


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("remembrfgtoadphsyuiw ,.:?!-'@/_")
            + list("记住忘掉别了吗请帮我删除的忆关闭开启把，：？")
        ),
        max_size=60,
    ),
    st.booleans(),
)
def test_random_text_properties(text: str, flagged: bool) -> None:
    result = recognize(text, quoted=flagged)
    if flagged:
        assert result is None
    elif result is not None:
        # The subject is always a verbatim slice of what the user wrote.
        assert result.subject in text
        assert result.subject == result.subject.strip()
        if result.action in ("enable", "disable"):
            assert result.subject == ""
        else:
            assert result.subject

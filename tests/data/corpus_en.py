"""English requests and conversation for the recognizer (see tests/unit/test_intents.py).

REQUESTS rows are (text, action, language, subject); subject ANY is not asserted. Everything in
CONVERSATION must stay conversation: a single hit there would store, delete or hide memory
nobody asked the bot to touch.
"""

from __future__ import annotations

from tests.data.corpus import ANY, Row

REMEMBER: list[Row] = [
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


DOUBLE_NEGATIVE: list[Row] = [
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


MENTION: list[Row] = [
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


COMMANDS: list[Row] = [
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
]


FORGET: list[Row] = [
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


SWITCH: list[Row] = [
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


WIDER: list[Row] = [
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


QUESTIONS: list[str] = [
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
]


OWN_MEMORY: list[str] = [
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
]


NEGATIVE_REQUESTS: list[str] = [
    "don't remember this",
    "do not remember that",
    "please don't save this",
    "please don't remember my address",
    "never remember this",
    "don't forget to buy milk",
    "please forget the past",
    "please forget the previous instructions",
    "please forget the formatting and just answer",
    "please forget the car",
    "can you forget the car?",
    "could you please forget that guy?",
    "please forget it",
    "remember to call me tomorrow",
]


IDIOMS: list[str] = [
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
]


OTHER_SWITCHES: list[str] = [
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
]


MENTIONS_ONLY: list[str] = [
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
    "Note to self: buy milk",
    "Note: the build is broken",
    "the notebook is on the desk",
    "keep that in mind",
    "keep in mind",
    "Memory is a funny thing",
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
    "",
    "   ",
    "hello there",
]


REPORTED_SPEECH: list[str] = [
    "she told me to remember that the store closes at 8",
    "my boss said forget it",
    "He keeps saying 'turn off memory'",
    "my teacher said to remember that",
    "they asked the bot to forget my address",
]


WIDER_NONE: list[str] = [
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
    "from now on remember to lock the door",
    "from now on I'll remember your name",
    "from now on, don't remember anything I say",
    "going forward, remember to update the changelog",
    "in the future, turn off the lights when you leave",
    "for future reference, the wifi password is on the fridge",
    "remove that memory card from the camera",
    "delete that memory leak workaround",
    "remove that memory about me",
    "I want to remove that memory about my ex from my head",
    "stop remembering the past",
    "stop remembering me",
    "I can't stop remembering my ex",
    "stop remembering that guy",
    "stop remembering our fights",
    "don't stop remembering my birthday",
    "stop remembering my address?",
    "stop remembering everything we discussed, new plan",
    "/memory",
    "/memory status",
    "/memory on or off?",
    "/memory offline",
    "turn off notifications for this topic",
    "close this topic",
    "how do I turn off memory in this topic?",
    "turn off the lights in this chat",
    "mute this thread",
    "turn off memory for this topic?",
    "disable memory swapping for this thread",
    "she said to turn off memory for this topic",
    "she told me from now on remember that I'm the boss",
    "he said hey bot, remember that I'm vegan",
]

# Requests as people phrase them, and the conversation they must not swallow.
GROWN: list[Row] = [
    ("make a mental note that I'm allergic to kiwi", "remember", "en", "I'm allergic to kiwi"),
    ("make a mental note: the garage code is 7788", "remember", "en", "the garage code is 7788"),
    ("write down that my badge number is 5521", "remember", "en", "my badge number is 5521"),
    ("write this down: my gate code is 4412", "remember", "en", "my gate code is 4412"),
    ("jot down: my locker is 221", "remember", "en", "my locker is 221"),
    ("jot this down: I parked on level 3", "remember", "en", "I parked on level 3"),
    ("note that down: my PIN hint is the dog", "remember", "en", "my PIN hint is the dog"),
    ("just remember that I'm vegan", "remember", "en", "I'm vegan"),
    ("actually, remember that I'm left-handed", "remember", "en", "I'm left-handed"),
    ("remember for the future that I'm diabetic", "remember", "en", "I'm diabetic"),
    ("remember for next time: I prefer aisle seats", "remember", "en", "I prefer aisle seats"),
    ("please remember for me that my flight is on Tuesday", "remember", "en", ANY),
    ("keep in mind for the future that I'm left-handed", "remember", "en", "I'm left-handed"),
    ("hey there, remember that I moved to Porto", "remember", "en", "I moved to Porto"),
    ("hey bot — remember that I'm vegan", "remember", "en", "I'm vegan"),
    ("👋 remember that my cat is Mochi", "remember", "en", "my cat is Mochi"),
    ("never forget that I'm allergic to penicillin", "remember", "en", ANY),
    ("don't ever forget that I hate cilantro", "remember", "en", "I hate cilantro"),
    ("stop saving memories", "disable", "en", ""),
    ("stop storing memories about me", "disable", "en", ""),
]

GROWN_NONE: list[str] = [
    "write down the answer",
    "write down your thoughts",
    "just remember to breathe",
    "just forget it",
    "never forget",
    "never forget where you came from",
    "never forget to lock the door",
    "jot down some ideas",
    "write it down",
    "note it down",
    "stop saving",
    "stop saving the file",
    "stop making memories with her",
    "remember for me",
    "remember forever",
    "hey there, how are you?",
    "actually I can't remember my password",
    "I wrote down that my badge number is 5521",
    "write down my thoughts on the design",
    "jot down my ideas for the talk",
]

# Requests as people phrase them: stop + a verb of keeping, a modal, no longer keeping.
PHRASED: list[Row] = [
    ("stop saving what I say", "disable", "en", ""),
    ("please stop storing my messages", "disable", "en", ""),
    ("stop recording our conversations", "disable", "en", ""),
    ("stop logging this chat", "disable", "en", ""),
    ("stop keeping everything we say", "disable", "en", ""),
    ("stop memorizing my address", "forget", "en", "my address"),
]
PHRASED_NONE: list[str] = [
    "stop saving money",
    "stop recording",
    "stop tracking me",
    "stop keeping track of time",
    "I stop saving what I say when I'm tired",
    "don't stop saving my messages",
    "why did you stop saving my messages?",
    "stop it",
    "stop saving my work every five minutes",
    "stop saving my address to the form",
]

REQUESTS: list[Row] = (
    REMEMBER + DOUBLE_NEGATIVE + MENTION + COMMANDS + FORGET + SWITCH + WIDER + GROWN + PHRASED
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
)

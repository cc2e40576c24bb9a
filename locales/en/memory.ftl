memory-remembered = Noted. I'll remember that.
memory-forgotten = { $count ->
    [0] Done: I won't remember that.
    [one] Done: I forgot one memory.
   *[other] Done: I forgot { $count } memories.
}
memory-partly-forgotten = { $count ->
    [one] Done: I forgot one memory.
   *[other] Done: I forgot { $count } memories.
} { $left ->
    [one] One memory is left: it includes what others said (or shares its messages with one that does), so only a group admin can forget it, with the buttons under /memory.
   *[other] { $left } memories are left: they include what others said (or share their messages with one that does), so only a group admin can forget them, with the buttons under /memory.
}
memory-kept-out = { $count ->
    [0] Okay, that stays out of my memory.
    [one] Okay, that stays out of my memory, and I forgot the memory that already held it.
   *[other] Okay, that stays out of my memory, and I forgot the { $count } memories that already held it.
}
memory-nothing-to-forget = I couldn't find a memory that matches that.
memory-enabled = Memory is on in this chat.
memory-disabled = Memory is off in this chat. What I stored is kept, but I won't use or add to it until you turn it back on.
memory-already-enabled = Memory is already on here.
memory-already-disabled = Memory is already off here.
memory-not-allowed = Only a group admin can do that here.
memory-off = Memory is off in this chat; turn it on first.
memory-error = Sorry, something went wrong. Please try again later.
memory-model-unavailable = Sorry, I can't answer right now: the language model is unavailable.
memory-cascade-not-allowed = Forgetting that would also remove memories that include what others said. Only a group admin can do that here.
memory-not-member = Only current members of this group can use its memory.
memory-unavailable = Memory is unavailable in this chat.
memory-source-changed = That message was edited or removed after you sent it, so I didn't remember it. Please ask again.
memory-flood = Too many messages at once: I'll skip some of them. Please send them more slowly.
memory-db-unavailable = Sorry, I can't reach my memory right now. I'll keep your message and catch up in a minute; please ask again then.
memory-enabled-topic = Memory is on in this topic.
memory-disabled-topic = Memory is off in this topic. What I stored is kept, but I won't use or add to it until you turn it back on.
memory-already-enabled-topic = Memory is already on in this topic.
memory-already-disabled-topic = Memory is already off in this topic.
memory-off-topic = Memory is off in this topic; turn it on first.
screen-title-chat = Memory in this chat
screen-title-topic = Memory in this topic
screen-empty = Nothing is remembered here yet.
screen-date = { DATETIME($when, dateStyle: "medium") }
screen-replaced = replaced on { $when } by “{ $by }”
screen-replaced-newer = replaced on { $when } by a newer memory
screen-someone = a member
screen-more = and { $count } more
screen-is-off = Memory is off here: these are kept, but not used or added to.
screen-at-share = Memory here holds { $held }; its fair share is { $share }. When memory is full, the least used ones here go first.
screen-status = { $count ->
    [one] 1 memory
   *[other] { $count } memories
} · { $pending ->
    [yes] the index is being updated
   *[no] the index is up to date
} · { $ran ->
    [yes] last ran { $when }
   *[no] not run here yet
}
screen-spend-button = Spend
screen-spend = Spent { $spent } of this workspace's { $budget } budget
screen-forget = Forget { $n }
screen-prev = ‹ Previous
screen-next = Next ›
screen-turn-on = Turn memory on
screen-turn-off = Turn memory off
screen-refresh = Refresh
screen-confirm = Forget “{ $title }”? Memories that share its sources go too.
screen-yes = Yes, forget it
screen-cancel = Cancel
screen-not-yours = Only the person who opened this screen, or an admin, can use these buttons.
screen-gone = That memory is already gone.
screen-invalid = This button is no longer valid.
command-memory = Show what I remember here
command-remember = Remember what you say next to it
command-forget = Forget a memory
command-memory-on = Turn memory on here
command-memory-off = Turn memory off here
page-open = Open memory manager
page-open-group = Here is the memory of { $title }. This button works for { $minutes } minutes; after that, open it again with /memory in the group.
page-link-invalid = This link is not valid for you. Open the memory again with /memory in the group.
page-link-expired = This link has expired. Open the memory again with /memory in the group.
page-title = Memory manager
page-search = Search memories
page-search-button = Search
page-clear = Clear
page-no-match = No memory matches that.
page-loading = Loading…
page-more = Show more
page-select = Select
page-confirm = Yes, forget them
page-export = Export
page-exported = Your export is downloading.
page-speakers = Said by
page-created = Made
page-used = Last used
page-until = Kept until
page-replaced = Replaced
page-replaced-on = Replaced on { $when }
page-replaced-by = { $when }, by “{ $by }”
page-replaced-by-newer = { $when }, by a newer memory
page-sources = Sources
page-note = Note
page-extracted = From conversation
page-status = Status
page-jobs = Jobs
page-label = { $label }: { $value }
page-list-separator = {", "}
page-jobs-line = Jobs — { $jobs }
page-back = Back
page-preview = { $count ->
    [one] This memory will be forgotten:
   *[other] These { $count } memories will be forgotten:
}
page-preview-left = { $count ->
    [one] This memory stays: it includes what others said (or shares its messages with one that does), so only a group admin can forget it.
   *[other] These { $count } memories stay: they include what others said (or share their messages with one that does), so only a group admin can forget them.
}
page-preview-hidden = { $count ->
    [one] …and 1 more memory you cannot see.
   *[other] …and { $count } more memories you cannot see.
}
page-problems = { $count ->
    [0] No jobs need an operator.
    [one] 1 job needs an operator.
   *[other] { $count } jobs need an operator.
}
page-error-auth = This page could not confirm who you are. Close it and open it again from the bot.
page-error-expired = This page has been open too long. Close it and open it again from the bot.
page-error-link = This link is not valid for you. Open the memory again with /memory.
page-error-link-expired = This link has expired. Open the memory again with /memory.
page-error-link-used = This export link has been used already. Tap Export again for a new one.
page-error-request = That request was not understood.
page-error-busy = Memory can't be reached right now. Please try again in a minute.
page-error-no-telegram = Open this page from the bot in Telegram.
page-forget = Forget
page-forget-all = Forget all
page-forget-n = { $count ->
    [one] Forget 1 memory
   *[other] Forget { $count } memories
}
page-switch = Use and add memories here
page-confirm-off = Turn memory off? What is kept stays and can still be seen, forgotten and exported, but it is not used or added to.
page-confirm-on = Turn memory on? What is kept is used again, and new memories are added.
page-source-link = Message { $n }
page-sources-unlinked = Telegram has no links to messages in this chat.
page-not-yours = Someone else said this, so only they or a group admin can forget it.
page-close = Close
page-session-ended = This page has been open too long, so it can no longer make changes. Close it and open it again from the bot with /memory.
page-job-extract = Reading conversations: { $count }
page-job-consolidate = Combining memories: { $count }
page-job-done = Finished: { $count }
page-job-failed = Failed: { $count }
page-job-stopped = Stopped: { $count }
page-jobs-none = none
page-count = { $count ->
    [one] 1 memory
   *[other] { $count } memories
}

memory-remembered = 好的，我记住了。
memory-forgotten = { $count ->
    [0] 好的，我不会记住这件事。
   *[other] 已完成：我忘记了 { $count } 条记忆。
}
memory-nothing-to-forget = 我没有找到与之相符的记忆。
memory-enabled = 本聊天的记忆已开启。
memory-disabled = 本聊天的记忆已关闭。已保存的内容会保留，但在重新开启之前我不会使用或新增记忆。
memory-already-enabled = 这里的记忆本来就是开启的。
memory-already-disabled = 这里的记忆本来就是关闭的。
memory-not-allowed = 在这里只有群管理员可以这样做。
memory-off = 本聊天的记忆已关闭，请先开启。
memory-error = 抱歉，出了点问题，请稍后再试。
memory-model-unavailable = 抱歉，语言模型暂时不可用，我现在无法回答。
memory-cascade-not-allowed = 忘记这条会连带删除包含其他人发言的记忆。在这里只有群管理员可以这样做。
memory-not-member = 只有本群的现有成员才能使用本群的记忆。
memory-unavailable = 本聊天的记忆当前不可用。
memory-db-unavailable = 抱歉，我暂时无法访问记忆。我会先保存你的消息，稍后补上；请过一会儿再问。
memory-enabled-topic = 本话题的记忆已开启。
memory-disabled-topic = 本话题的记忆已关闭。已保存的内容会保留，但在重新开启之前我不会使用或新增记忆。
memory-already-enabled-topic = 本话题的记忆本来就是开启的。
memory-already-disabled-topic = 本话题的记忆本来就是关闭的。
memory-off-topic = 本话题的记忆已关闭，请先开启。

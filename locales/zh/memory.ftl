memory-remembered = 好的，我记住了。
memory-forgotten = { $count ->
    [0] 好的，我不会记住这件事。
   *[other] 好的，已忘记 { $count } 条记忆。
}
memory-partly-forgotten = 好的，已忘记 { $count } 条记忆。还剩 { $left } 条：其中包含其他人的发言（或与这样的记忆共用消息），只有群管理员可以忘记，可用 /memory 下的按钮。
memory-kept-out = { $count ->
    [0] 好的，这些不会进入我的记忆。
   *[other] 好的，这些不会进入我的记忆；已经记下它的 { $count } 条记忆也已忘记。
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
memory-source-changed = 这条消息在发送后被编辑或删除了，所以我没有记住它。请再说一次。
memory-flood = 消息太多太快了，我会跳过其中一部分。请慢一点发送。
memory-db-unavailable = 抱歉，我暂时无法访问记忆。我会先保存你的消息，稍后补上；请过一会儿再问。
memory-enabled-topic = 本话题的记忆已开启。
memory-disabled-topic = 本话题的记忆已关闭。已保存的内容会保留，但在重新开启之前我不会使用或新增记忆。
memory-already-enabled-topic = 本话题的记忆本来就是开启的。
memory-already-disabled-topic = 本话题的记忆本来就是关闭的。
memory-off-topic = 本话题的记忆已关闭，请先开启。
screen-title-chat = 本聊天的记忆
screen-title-topic = 本话题的记忆
screen-empty = 这里还没有任何记忆。
screen-date = { DATETIME($when, dateStyle: "medium") }
screen-replaced = 已于 { $when } 被“{ $by }”取代
screen-replaced-newer = 已于 { $when } 被一条更新的记忆取代
screen-someone = 一位成员
screen-more = 及另外 { $count } 人
screen-is-off = 这里的记忆已关闭：内容会保留，但不会被使用或新增。
screen-at-share = 这里保存了 { $held } 条记忆，其公平份额为 { $share } 条。记忆存满时，这里最久未用的记忆会先被删除。
screen-status = { $count } 条记忆 · { $pending ->
    [yes] 索引正在更新
   *[no] 索引已是最新
} · { $ran ->
    [yes] 上次运行：{ $when }
   *[no] 尚未运行
}
screen-spend-button = 花费
screen-spend = 本工作区已花费 { $spent }，预算 { $budget }
screen-forget = 忘记 { $n }
screen-prev = ‹ 上一页
screen-next = 下一页 ›
screen-turn-on = 开启记忆
screen-turn-off = 关闭记忆
screen-refresh = 刷新
screen-confirm = 要忘记“{ $title }”吗？与它共享来源的记忆也会一起删除。
screen-yes = 是的，忘记
screen-cancel = 取消
screen-not-yours = 只有打开此界面的人或管理员才能使用这些按钮。
screen-gone = 这条记忆已经不存在了。
screen-invalid = 这个按钮已失效。
command-memory = 查看这里的记忆
command-remember = 记住你附带的内容
command-forget = 忘记一条记忆
command-memory-on = 在这里开启记忆
command-memory-off = 在这里关闭记忆
page-open = 打开记忆管理
page-open-group = 这是「{ $title }」的记忆。此按钮在 { $minutes } 分钟内有效；过期后请在群组里用 /memory 重新打开。
page-link-invalid = 这个链接对你无效。请在群组里用 /memory 重新打开记忆。
page-link-expired = 这个链接已过期。请在群组里用 /memory 重新打开记忆。
page-title = 记忆管理
page-search = 搜索记忆
page-search-button = 搜索
page-clear = 清除
page-no-match = 没有符合的记忆。
page-loading = 正在加载…
page-more = 显示更多
page-select = 选择
page-confirm = 是的，忘记它们
page-export = 导出
page-exported = 导出文件正在下载。
page-speakers = 说话人
page-created = 创建于
page-used = 最近使用
page-until = 保留至
page-replaced = 已被取代
page-replaced-on = 已于 { $when } 被取代
page-replaced-by = { $when }，被“{ $by }”取代
page-replaced-by-newer = { $when }，被一条更新的记忆取代
page-sources = 来源
page-note = 笔记
page-extracted = 来自对话
page-status = 状态
page-jobs = 任务
page-label = { $label }：{ $value }
page-list-separator = 、
page-jobs-line = 任务 — { $jobs }
page-back = 返回
page-preview = 将忘记这 { $count } 条记忆：
page-preview-left = 这 { $count } 条记忆会保留：其中包含其他人的发言（或与这样的记忆共用消息），只有群管理员可以忘记。
page-preview-hidden = …还有 { $count } 条你看不到的记忆。
page-problems = { $count ->
    [0] 没有需要运维处理的任务。
   *[other] 有 { $count } 个任务需要运维处理。
}
page-error-auth = 此页面无法确认你的身份。请关闭后从机器人重新打开。
page-error-expired = 此页面打开太久了。请关闭后从机器人重新打开。
page-error-link = 这个链接对你无效。请用 /memory 重新打开记忆。
page-error-link-expired = 这个链接已过期。请用 /memory 重新打开记忆。
page-error-link-used = 这个导出链接已经用过了。请再点一次“导出”获取新的链接。
page-error-request = 无法理解这个请求。
page-error-busy = 暂时无法访问记忆，请一分钟后再试。
page-error-no-telegram = 请在 Telegram 里从机器人打开此页面。
page-forget = 忘记
page-forget-all = 全部忘记
page-forget-n = { $count ->
   *[other] 忘记 { $count } 条记忆
}
page-switch = 在这里使用并添加记忆
page-confirm-off = 关闭记忆？已保存的内容仍然保留，可以查看、忘记和导出，但不会被使用，也不会再添加新内容。
page-confirm-on = 开启记忆？已保存的内容会重新被使用，并会添加新的记忆。
page-source-link = 消息 { $n }
page-sources-unlinked = Telegram 无法链接到这个聊天里的消息。
page-not-yours = 这是别人说的，只有本人或群管理员可以忘记它。
page-close = 关闭
page-session-ended = 此页面打开太久了，已无法再做更改。请关闭它，再在机器人那里用 /memory 重新打开。
page-job-extract = 正在读取对话：{ $count }
page-job-consolidate = 正在合并记忆：{ $count }
page-job-done = 已完成：{ $count }
page-job-failed = 失败：{ $count }
page-job-stopped = 已停止：{ $count }
page-jobs-none = 无
page-count = { $count ->
   *[other] { $count } 条记忆
}

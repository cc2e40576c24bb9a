memory-remembered = Хорошо, запомню.
memory-forgotten = { $count ->
    [0] Готово, я этого не запомню.
    [one] Готово, из памяти удалена { $count } запись.
    [few] Готово, из памяти удалены { $count } записи.
   *[many] Готово, из памяти удалено { $count } записей.
    [other] Готово, из памяти удалено { $count } записи.
}
memory-kept-out = { $count ->
    [0] Хорошо, это останется вне моей памяти.
    [one] Хорошо, это останется вне моей памяти, а { $count } запись, где это уже было, я удалил.
    [few] Хорошо, это останется вне моей памяти, а { $count } записи, где это уже было, я удалил.
   *[many] Хорошо, это останется вне моей памяти, а { $count } записей, где это уже было, я удалил.
    [other] Хорошо, это останется вне моей памяти, а { $count } записи, где это уже было, я удалил.
}
memory-nothing-to-forget = Подходящей записи в памяти не нашлось.
memory-enabled = Память в этом чате включена.
memory-disabled = Память в этом чате выключена. Сохранённое останется, но я не буду им пользоваться и пополнять его, пока вы снова её не включите.
memory-already-enabled = Память здесь уже включена.
memory-already-disabled = Память здесь уже выключена.
memory-not-allowed = Здесь это может сделать только администратор группы.
memory-off = Память в этом чате выключена — сначала включите её.
memory-error = Извините, что-то пошло не так. Попробуйте, пожалуйста, позже.
memory-model-unavailable = Извините, сейчас не могу ответить: языковая модель недоступна.
memory-cascade-not-allowed = Вместе с этой записью удалятся и записи со словами других участников. Здесь это может сделать только администратор группы.
memory-not-member = Памятью этой группы могут пользоваться только её нынешние участники.
memory-unavailable = Память в этом чате недоступна.
memory-source-changed = Это сообщение изменили или удалили после отправки, поэтому я его не запомнил. Попросите, пожалуйста, ещё раз.
memory-db-unavailable = Извините, сейчас нет доступа к памяти. Я сохраню ваше сообщение и наверстаю через минуту — спросите, пожалуйста, ещё раз чуть позже.
memory-enabled-topic = Память в этой теме включена.
memory-disabled-topic = Память в этой теме выключена. Сохранённое останется, но я не буду им пользоваться и пополнять его, пока вы снова её не включите.
memory-already-enabled-topic = Память в этой теме уже включена.
memory-already-disabled-topic = Память в этой теме уже выключена.
memory-off-topic = Память в этой теме выключена — сначала включите её.
screen-title-chat = Память этого чата
screen-title-topic = Память этой темы
screen-empty = Здесь пока ничего не сохранено.
screen-date = { DATETIME($when, dateStyle: "medium") }
screen-replaced = заменено { $when } записью «{ $by }»
screen-replaced-newer = заменено { $when } более новой записью
screen-someone = участник
screen-more = и ещё { $count }
screen-is-off = Память здесь выключена: записи сохранены, но не используются и не пополняются.
screen-at-share = Здесь хранится записей: { $held }; справедливая доля — { $share }. Когда память заполнена, первыми удаляются давно не использованные записи отсюда.
screen-status = { $count ->
    [one] { $count } запись
    [few] { $count } записи
   *[many] { $count } записей
    [other] { $count } записи
} · { $pending ->
    [yes] индекс обновляется
   *[no] индекс актуален
} · { $ran ->
    [yes] последняя обработка: { $when }
   *[no] обработки здесь ещё не было
}
screen-spend-button = Расходы
screen-spend = Потрачено { $spent } из бюджета { $budget } этого рабочего пространства
screen-forget = Забыть { $n }
screen-prev = ‹ Назад
screen-next = Далее ›
screen-turn-on = Включить память
screen-turn-off = Выключить память
screen-refresh = Обновить
screen-confirm = Забыть «{ $title }»? Записи с теми же источниками тоже удалятся.
screen-yes = Да, забыть
screen-cancel = Отмена
screen-not-yours = Нажимать эти кнопки может только тот, кто открыл этот экран, или администратор.
screen-gone = Этой записи уже нет.
screen-invalid = Эта кнопка больше не действует.
command-memory = Показать, что я здесь помню
command-remember = Запомнить текст после команды
command-forget = Забыть запись
command-memory-on = Включить память здесь
command-memory-off = Выключить память здесь

memory-flood = Слишком много сообщений сразу: часть из них я пропущу. Пожалуйста, пишите помедленнее.

# Менеджер памяти (Mini App)
page-open = Открыть менеджер памяти
page-open-group = Вот память чата «{ $title }». Кнопка работает { $minutes ->
    [one] { $minutes } минуту
    [few] { $minutes } минуты
   *[other] { $minutes } минут
}; потом откройте её снова командой /memory в группе.
page-link-invalid = Эта ссылка не для вас. Откройте память снова командой /memory в группе.
page-link-expired = Срок действия ссылки истёк. Откройте память снова командой /memory в группе.
page-title = Менеджер памяти
page-search = Поиск по памяти
page-search-button = Найти
page-clear = Сбросить
page-no-match = Ничего не найдено.
page-loading = Загрузка…
page-more = Показать ещё
page-select = Выбрать
page-confirm = Да, забыть
page-export = Экспорт
page-exported = Файл экспорта скачивается.
page-speakers = Со слов
page-created = Создано
page-used = Использовано
page-until = Хранится до
page-replaced = Заменено
page-replaced-on = Заменено { $when }
page-replaced-by = { $when }, записью «{ $by }»
page-replaced-by-newer = { $when }, более новой записью
page-sources = Источники
page-note = Заметка
page-extracted = Из разговора
page-status = Состояние
page-jobs = Задачи
page-label = { $label }: { $value }
page-list-separator = {", "}
page-jobs-line = Задачи — { $jobs }
page-back = Назад
page-preview = { $count ->
    [one] Будет забыта { $count } запись:
    [few] Будут забыты { $count } записи:
   *[other] Будут забыты { $count } записей:
}
page-preview-hidden = { $count ->
    [one] …и ещё { $count } запись, которую вы не видите.
    [few] …и ещё { $count } записи, которые вы не видите.
   *[other] …и ещё { $count } записей, которые вы не видите.
}
page-problems = { $count ->
    [0] Нет задач, требующих оператора.
    [one] { $count } задача требует оператора.
    [few] { $count } задачи требуют оператора.
   *[other] { $count } задач требуют оператора.
}
page-error-auth = Не удалось подтвердить, кто вы. Закройте страницу и откройте её снова из бота.
page-error-expired = Страница открыта слишком долго. Закройте её и откройте снова из бота.
page-error-link = Эта ссылка не для вас. Откройте память снова командой /memory.
page-error-link-expired = Срок действия ссылки истёк. Откройте память снова командой /memory.
page-error-link-used = Эта ссылка на экспорт уже использована. Нажмите «Экспорт» ещё раз, чтобы получить новую.
page-error-request = Запрос не понят.
page-error-busy = Память сейчас недоступна. Попробуйте через минуту.
page-error-no-telegram = Откройте эту страницу из бота в Telegram.
page-forget = Забыть
page-forget-all = Забыть всё
page-forget-n = { $count ->
    [one] Забыть { $count } запись
    [few] Забыть { $count } записи
   *[other] Забыть { $count } записей
}
page-switch = Использовать и пополнять память здесь
page-confirm-off = Выключить память? Сохранённое останется: его можно смотреть, забывать и экспортировать, но оно не используется и не пополняется.
page-confirm-on = Включить память? Сохранённое снова используется, и добавляются новые записи.
page-source-link = Сообщение { $n }
page-sources-unlinked = Telegram не даёт ссылок на сообщения этого чата.
page-not-yours = Это сказал кто-то другой: забыть это может только он или администратор группы.
page-close = Закрыть
page-session-ended = Страница открыта слишком долго и больше не может ничего менять. Закройте её и откройте снова из бота командой /memory.
page-job-extract = Чтение разговоров: { $count }
page-job-consolidate = Объединение записей: { $count }
page-job-done = Готово: { $count }
page-job-failed = С ошибкой: { $count }
page-job-stopped = Остановлено: { $count }
page-jobs-none = нет
page-count = { $count ->
    [one] { $count } запись
    [few] { $count } записи
   *[other] { $count } записей
}

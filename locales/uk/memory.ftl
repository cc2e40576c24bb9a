memory-remembered = Добре, запам’ятаю.
memory-forgotten = { $count ->
    [0] Готово, я цього не запам’ятаю.
    [one] Готово, з пам’яті видалено { $count } запис.
    [few] Готово, з пам’яті видалено { $count } записи.
   *[many] Готово, з пам’яті видалено { $count } записів.
    [other] Готово, з пам’яті видалено { $count } запису.
}
memory-kept-out = { $count ->
    [0] Добре, це залишиться поза моєю пам’яттю.
    [one] Добре, це залишиться поза моєю пам’яттю, а { $count } запис, де це вже було, я видалив.
    [few] Добре, це залишиться поза моєю пам’яттю, а { $count } записи, де це вже було, я видалив.
   *[many] Добре, це залишиться поза моєю пам’яттю, а { $count } записів, де це вже було, я видалив.
    [other] Добре, це залишиться поза моєю пам’яттю, а { $count } запису, де це вже було, я видалив.
}
memory-nothing-to-forget = Відповідного запису в пам’яті не знайшлося.
memory-enabled = Пам’ять у цьому чаті ввімкнено.
memory-disabled = Пам’ять у цьому чаті вимкнено. Збережене залишиться, але я не користуватимуся ним і не поповнюватиму його, доки ви знову її не ввімкнете.
memory-already-enabled = Пам’ять тут уже ввімкнена.
memory-already-disabled = Пам’ять тут уже вимкнена.
memory-not-allowed = Тут це може зробити лише адміністратор групи.
memory-off = Пам’ять у цьому чаті вимкнено — спершу ввімкніть її.
memory-error = Вибачте, щось пішло не так. Спробуйте, будь ласка, пізніше.
memory-model-unavailable = Вибачте, зараз не можу відповісти: мовна модель недоступна.
memory-cascade-not-allowed = Разом із цим записом зникнуть і записи зі словами інших учасників. Тут це може зробити лише адміністратор групи.
memory-not-member = Пам’яттю цієї групи можуть користуватися лише її теперішні учасники.
memory-unavailable = Пам’ять у цьому чаті недоступна.
memory-source-changed = Це повідомлення змінили або видалили після надсилання, тож я його не запам’ятав. Попросіть, будь ласка, ще раз.
memory-db-unavailable = Вибачте, зараз немає доступу до пам’яті. Я збережу ваше повідомлення й надолужу за хвилину — спитайте, будь ласка, ще раз трохи згодом.
memory-enabled-topic = Пам’ять у цій темі ввімкнено.
memory-disabled-topic = Пам’ять у цій темі вимкнено. Збережене залишиться, але я не користуватимуся ним і не поповнюватиму його, доки ви знову її не ввімкнете.
memory-already-enabled-topic = Пам’ять у цій темі вже ввімкнена.
memory-already-disabled-topic = Пам’ять у цій темі вже вимкнена.
memory-off-topic = Пам’ять у цій темі вимкнено — спершу ввімкніть її.
screen-title-chat = Пам’ять цього чату
screen-title-topic = Пам’ять цієї теми
screen-empty = Тут поки що нічого не збережено.
screen-date = { DATETIME($when, dateStyle: "medium") }
screen-replaced = замінено { $when } записом «{ $by }»
screen-replaced-newer = замінено { $when } новішим записом
screen-someone = учасник
screen-more = і ще { $count }
screen-is-off = Пам’ять тут вимкнено: записи збережено, але вони не використовуються й не поповнюються.
screen-at-share = Тут зберігається записів: { $held }; справедлива частка — { $share }. Коли пам’ять заповнена, першими видаляються давно не використані записи звідси.
screen-status = { $count ->
    [one] { $count } запис
    [few] { $count } записи
   *[many] { $count } записів
    [other] { $count } запису
} · { $pending ->
    [yes] індекс оновлюється
   *[no] індекс актуальний
} · { $ran ->
    [yes] остання обробка: { $when }
   *[no] обробки тут ще не було
}
screen-spend-button = Витрати
screen-spend = Витрачено { $spent } із бюджету { $budget } цього робочого простору
screen-forget = Забути { $n }
screen-prev = ‹ Назад
screen-next = Далі ›
screen-turn-on = Увімкнути пам’ять
screen-turn-off = Вимкнути пам’ять
screen-refresh = Оновити
screen-confirm = Забути «{ $title }»? Записи з тими самими джерелами теж буде видалено.
screen-yes = Так, забути
screen-cancel = Скасувати
screen-not-yours = Натискати ці кнопки може лише той, хто відкрив цей екран, або адміністратор.
screen-gone = Цього запису вже немає.
screen-invalid = Ця кнопка більше не діє.
command-memory = Показати, що я тут пам’ятаю
command-remember = Запам’ятати текст після команди
command-forget = Забути запис
command-memory-on = Увімкнути пам’ять тут
command-memory-off = Вимкнути пам’ять тут

memory-flood = Забагато повідомлень одразу: частину з них я пропущу. Будь ласка, пишіть повільніше.

# Менеджер пам’яті (Mini App)
page-open = Відкрити менеджер пам’яті
page-open-group = Ось пам’ять чату «{ $title }». Кнопка працює { $minutes ->
    [one] { $minutes } хвилину
    [few] { $minutes } хвилини
   *[other] { $minutes } хвилин
}; потім відкрийте її знову командою /memory у групі.
page-link-invalid = Це посилання не для вас. Відкрийте пам’ять знову командою /memory у групі.
page-link-expired = Термін дії посилання минув. Відкрийте пам’ять знову командою /memory у групі.
page-title = Менеджер пам’яті
page-search = Пошук у пам’яті
page-search-button = Знайти
page-clear = Скинути
page-no-match = Нічого не знайдено.
page-loading = Завантаження…
page-more = Показати ще
page-select = Вибрати
page-confirm = Так, забути
page-export = Експорт
page-exported = Файл експорту завантажується.
page-speakers = Зі слів
page-created = Створено
page-used = Використано
page-until = Зберігається до
page-replaced = Замінено
page-replaced-on = Замінено { $when }
page-replaced-by = { $when }, записом «{ $by }»
page-replaced-by-newer = { $when }, новішим записом
page-sources = Джерела
page-note = Нотатка
page-extracted = З розмови
page-status = Стан
page-jobs = Завдання
page-label = { $label }: { $value }
page-list-separator = {", "}
page-jobs-line = Завдання — { $jobs }
page-back = Назад
page-preview = { $count ->
    [one] Буде забуто { $count } запис:
    [few] Буде забуто { $count } записи:
   *[other] Буде забуто { $count } записів:
}
page-preview-hidden = { $count ->
    [one] …і ще { $count } запис, якого ви не бачите.
    [few] …і ще { $count } записи, яких ви не бачите.
   *[other] …і ще { $count } записів, яких ви не бачите.
}
page-problems = { $count ->
    [0] Немає завдань, що потребують оператора.
    [one] { $count } завдання потребує оператора.
    [few] { $count } завдання потребують оператора.
   *[other] { $count } завдань потребують оператора.
}
page-error-auth = Не вдалося підтвердити, хто ви. Закрийте сторінку й відкрийте її знову з бота.
page-error-expired = Сторінка відкрита надто довго. Закрийте її й відкрийте знову з бота.
page-error-link = Це посилання не для вас. Відкрийте пам’ять знову командою /memory.
page-error-link-expired = Термін дії посилання минув. Відкрийте пам’ять знову командою /memory.
page-error-link-used = Це посилання на експорт уже використано. Натисніть «Експорт» ще раз, щоб отримати нове.
page-error-request = Запит не зрозуміло.
page-error-busy = Пам’ять зараз недоступна. Спробуйте за хвилину.
page-error-no-telegram = Відкрийте цю сторінку з бота в Telegram.
page-forget = Забути
page-forget-all = Забути все
page-forget-n = { $count ->
    [one] Забути { $count } запис
    [few] Забути { $count } записи
   *[other] Забути { $count } записів
}
page-switch = Використовувати й поповнювати пам’ять тут
page-confirm-off = Вимкнути пам’ять? Збережене залишиться: його можна переглядати, забувати й експортувати, але воно не використовується й не поповнюється.
page-confirm-on = Увімкнути пам’ять? Збережене знову використовується, і додаються нові записи.
page-source-link = Повідомлення { $n }
page-sources-unlinked = Telegram не дає посилань на повідомлення цього чату.
page-not-yours = Це сказав хтось інший: забути це може лише він або адміністратор групи.
page-close = Закрити
page-session-ended = Сторінка відкрита надто довго й більше не може нічого змінювати. Закрийте її та відкрийте знову з бота командою /memory.
page-job-extract = Читання розмов: { $count }
page-job-consolidate = Об’єднання записів: { $count }
page-job-done = Готово: { $count }
page-job-failed = З помилкою: { $count }
page-job-stopped = Зупинено: { $count }
page-jobs-none = немає
page-count = { $count ->
    [one] { $count } запис
    [few] { $count } записи
   *[other] { $count } записів
}

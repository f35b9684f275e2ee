/**
 * What mail clients write above quoted history and below a reply, per language: the data
 * extract-text.ts reads (compiled once by extract-text.markers.ts). A new language, or a
 * client's new wording, is an entry here. Everything is matched case-insensitively, after
 * the line is trimmed and its decoration (`-----`, `*`, a trailing colon) is taken off.
 *
 * Sources are the clients' own output: Gmail ("On <date> <name> <addr> wrote:", localised),
 * Outlook desktop/web/mobile (header blocks "From/Sent/To/Subject", "-----Original
 * Message-----", "Get Outlook for iOS"), Apple Mail ("On <date>, at <time>, <name> wrote:",
 * "Begin forwarded message:", "Sent from my iPhone"), Thunderbird ("On <date> <name> wrote:",
 * "-------- Forwarded Message --------"), Yahoo, Zoho ("---- On <date> <name> wrote ----"),
 * Proton ("------- Original Message -------", "Sent with Proton Mail"), Fastmail.
 */
export interface LanguageMarkers {
  /** First word(s) of an attribution line ("On", "Le", "Am", "W dniu"). */
  attributionOpeners: string[];
  /** The verb of an attribution ("wrote", "a écrit", "schrieb", "写道"). */
  attributionVerbs: string[];
  /**
   * Verbs that are ordinary words of prose alone ("geschrieben", "geschreven"): they make an
   * attribution only last before its colon, with the sender's address in the line (GMX's
   * "<addr> hat am <date> geschrieben:", Outlook for Mac's "heeft <name> <addr> geschreven:").
   */
  colonVerbs?: string[];
  /** Names of the fields of a header block, by kind ("From:", "De :", "发件人："). */
  fields: { from: string[]; date: string[]; to: string[]; cc: string[]; subject: string[] };
  /** Lines that open quoted history ("-----Original Message-----", "-----Message d'origine-----"). */
  separators: string[];
  /**
   * What a help desk's or an app's notification asks a reply to stay above ("##- Please type your
   * reply above this line -##", "-- Reply above this line --"): a line holding one of these, short,
   * decorated or ending with it, opens the notification quoted below.
   */
  replyAbove?: string[];
  /** Lines that open a forwarded message ("---------- Forwarded message ---------", "Begin forwarded message:"). */
  forwards: string[];
  /** Subject prefixes of a forward in a header block ("FW:", "WG:", "TR:", "RV:"); not "VS:", a Finnish reply but a Danish forward. */
  forwardSubjects: string[];
  /**
   * A device/app signature line starts with one of these ("Sent from", "Envoyé de mon"); with a
   * "…", it starts with the part before and ends with the part after ("von meinem…gesendet":
   * "Von meinem iPhone gesendet", not "Von meinem Handy aus geht das nicht").
   */
  devicePrefixes: string[];
  /**
   * ... or, in languages that put the verb last, ends with one of these ("gesendet", "から送信"):
   * then the line must also name a device or app (DEVICE_WORDS), as "ich habe es gesendet" does not.
   */
  deviceSuffixes: string[];
}

export const LANGUAGES: Record<string, LanguageMarkers> = {
  en: {
    attributionOpeners: ['on'],
    attributionVerbs: ['wrote', 'writes', 'has written', 'quoting'],
    fields: { from: ['from'], date: ['sent', 'date'], to: ['to', 'reply-to'], cc: ['cc', 'bcc'], subject: ['subject'] },
    separators: ['original message', 'reply message', 'original email', 'original appointment', 'original'],
    replyAbove: ['reply above this line', 'write above this line', 'respond above this line', 'response above this line', 'reply above the line'],
    forwards: ['forwarded message', 'begin forwarded message', 'forwarded email', 'forwarded by'],
    forwardSubjects: ['fw', 'fwd'],
    devicePrefixes: ['sent from', 'sent with', 'sent via', 'sent using', 'sent by', 'get outlook for', 'download outlook for'],
    deviceSuffixes: [],
  },
  de: {
    attributionOpeners: ['am'],
    attributionVerbs: ['schrieb', 'hat geschrieben', 'folgendes geschrieben', 'zitat von'],
    colonVerbs: ['geschrieben'],
    fields: { from: ['von'], date: ['gesendet', 'datum', 'gesendet am'], to: ['an', 'antwort an'], cc: ['cc', 'kopie', 'bcc'], subject: ['betreff'] },
    separators: ['ursprüngliche nachricht', 'originalnachricht', 'original-nachricht', 'ursprüngliche e-mail', 'ursprüngliche mail'],
    replyAbove: ['antwort oberhalb dieser zeile', 'antwort über dieser zeile', 'oberhalb dieser zeile antworten', 'über dieser zeile antworten'],
    forwards: ['weitergeleitete nachricht', 'anfang der weitergeleiteten nachricht', 'weitergeleitete mail', 'weitergeleitet von'],
    forwardSubjects: ['wg', 'fw', 'fwd'],
    devicePrefixes: ['von meinem…gesendet', 'von meiner…gesendet', 'gesendet von', 'gesendet mit', 'gesendet vom', 'outlook für…herunterladen', 'diese nachricht wurde von meinem…gesendet'],
    deviceSuffixes: ['gesendet', 'herunterladen'],
  },
  fr: {
    attributionOpeners: ['le'],
    attributionVerbs: ['a écrit', 'écrit', 'a ecrit', 'citation'],
    fields: { from: ['de', 'expéditeur'], date: ['envoyé', 'envoyé le', 'date', "date d'envoi"], to: ['à', 'a', 'destinataire', 'répondre à'], cc: ['cc', 'cci'], subject: ['objet', 'sujet'] },
    separators: ["message d'origine", 'message original', 'courriel original', 'mail original'],
    replyAbove: ['réponse au-dessus de cette ligne', 'répondre au-dessus de cette ligne', 'répondez au-dessus de cette ligne'],
    forwards: ['message transféré', 'début du message réexpédié', 'début du message transféré', 'message réexpédié', 'mail transféré', 'transféré par'],
    forwardSubjects: ['tr', 'fw', 'fwd'],
    devicePrefixes: ['envoyé de mon', 'envoyé depuis', 'envoyé à partir de', 'envoyé avec', 'envoyé de', 'télécharger outlook pour', 'obtenir outlook pour', 'provenance :'],
    deviceSuffixes: [],
  },
  es: {
    attributionOpeners: ['el'],
    attributionVerbs: ['escribió', 'escribio', 'ha escrito', 'citando a'],
    fields: { from: ['de', 'remitente'], date: ['enviado', 'enviado el', 'fecha'], to: ['para', 'a', 'destinatario'], cc: ['cc', 'cco'], subject: ['asunto'] },
    separators: ['mensaje original', 'correo original'],
    replyAbove: ['respuesta por encima de esta línea', 'responda por encima de esta línea', 'responder por encima de esta línea', 'respuesta encima de esta línea', 'responda encima de esta línea'],
    forwards: ['mensaje reenviado', 'inicio del mensaje reenviado'],
    forwardSubjects: ['rv', 'fw', 'fwd'],
    devicePrefixes: ['enviado desde', 'enviado con', 'obtener outlook para', 'descargar outlook para'],
    deviceSuffixes: [],
  },
  ca: {
    attributionOpeners: ['el'],
    attributionVerbs: ['ha escrit', 'va escriure'],
    fields: { from: ['de'], date: ['enviat', 'data'], to: ['per a', 'a'], cc: ['cc'], subject: ['assumpte'] },
    separators: ['missatge original'],
    forwards: ['missatge reenviat', 'inici del missatge reenviat'],
    forwardSubjects: ['rv', 'fw'],
    devicePrefixes: ["enviat des de l'", 'enviat des del', 'enviat des de'],
    deviceSuffixes: [],
  },
  it: {
    attributionOpeners: ['il', 'il giorno', 'in data'],
    attributionVerbs: ['ha scritto', 'scrisse'],
    fields: { from: ['da', 'mittente'], date: ['inviato', 'data', 'inviato il'], to: ['a', 'destinatario'], cc: ['cc', 'ccn'], subject: ['oggetto'] },
    separators: ['messaggio originale', 'messaggio di posta originale'],
    replyAbove: ['risposta sopra questa riga', 'rispondi sopra questa riga', 'rispondere sopra questa riga', 'risposta sopra questa linea', 'rispondi sopra questa linea'],
    forwards: ['messaggio inoltrato', 'inizio messaggio inoltrato'],
    forwardSubjects: ['i', 'fw', 'inoltro'],
    devicePrefixes: ['inviato da', 'inviato dal mio', 'inviato con', 'scarica outlook per', 'ottieni outlook per'],
    deviceSuffixes: [],
  },
  pt: {
    attributionOpeners: ['em', 'no dia'],
    attributionVerbs: ['escreveu'],
    fields: { from: ['de', 'remetente'], date: ['enviado', 'enviada em', 'enviado em', 'data'], to: ['para', 'destinatário'], cc: ['cc', 'cco'], subject: ['assunto'] },
    separators: ['mensagem original'],
    replyAbove: ['resposta acima desta linha', 'responda acima desta linha', 'responder acima desta linha'],
    forwards: ['mensagem encaminhada', 'início da mensagem reencaminhada', 'começo da mensagem encaminhada', 'início da mensagem encaminhada', 'mensagem reencaminhada'],
    forwardSubjects: ['enc', 'fw', 'fwd'],
    devicePrefixes: ['enviado do meu', 'enviado do', 'enviado de', 'enviado a partir do', 'enviado pelo', 'obter o outlook para', 'obtenha o outlook para'],
    deviceSuffixes: [],
  },
  nl: {
    attributionOpeners: ['op'],
    attributionVerbs: ['schreef', 'het volgende geschreven', 'heeft geschreven'],
    colonVerbs: ['geschreven'],
    fields: { from: ['van', 'afzender'], date: ['verzonden', 'datum', 'verstuurd'], to: ['aan'], cc: ['cc', 'bcc'], subject: ['onderwerp'] },
    separators: ['oorspronkelijk bericht', 'origineel bericht', 'oorspronkelijke e-mail'],
    replyAbove: ['antwoord boven deze regel', 'antwoord boven deze lijn', 'reageer boven deze regel', 'reageren boven deze regel', 'antwoorden boven deze regel', 'reactie boven deze regel'],
    forwards: ['doorgestuurd bericht', 'begin doorgestuurd bericht'],
    forwardSubjects: ['doorst', 'fw'],
    devicePrefixes: ['verzonden vanaf', 'verstuurd vanaf', 'verzonden met', 'verzonden van', 'verstuurd met', 'outlook voor'],
    deviceSuffixes: ['downloaden'],
  },
  da: {
    attributionOpeners: ['den', 'd.'],
    attributionVerbs: ['skrev', 'har skrevet'],
    fields: { from: ['fra', 'afsender'], date: ['sendt', 'dato'], to: ['til', 'modtager'], cc: ['cc', 'bcc'], subject: ['emne'] },
    separators: ['oprindelig meddelelse', 'original meddelelse'],
    forwards: ['videresendt meddelelse', 'start på videresendt besked', 'videresendt besked'],
    forwardSubjects: ['fw', 'vidst'],
    devicePrefixes: ['sendt fra', 'sendt via', 'sendt med', 'hent outlook til', 'få outlook til'],
    deviceSuffixes: [],
  },
  nb: {
    attributionOpeners: ['den'],
    attributionVerbs: ['skrev', 'har skrevet'],
    fields: { from: ['fra', 'avsender'], date: ['sendt', 'dato'], to: ['til', 'mottaker'], cc: ['kopi', 'cc'], subject: ['emne'] },
    separators: ['opprinnelig melding', 'original melding'],
    forwards: ['videresendt melding', 'videresendt e-post', 'start på videresendt melding'],
    forwardSubjects: ['vb', 'fw'],
    devicePrefixes: ['sendt fra', 'sendt med', 'få outlook for', 'hent outlook for'],
    deviceSuffixes: [],
  },
  sv: {
    attributionOpeners: ['den'],
    attributionVerbs: ['skrev', 'har skrivit'],
    fields: { from: ['från', 'avsändare'], date: ['skickat', 'skickades', 'datum'], to: ['till', 'mottagare'], cc: ['kopia', 'cc'], subject: ['ämne'] },
    separators: ['ursprungligt meddelande', 'originalmeddelande'],
    forwards: ['vidarebefordrat meddelande', 'vidarebefordrat brev', 'början på vidarebefordrat brev', 'vidarebefordrat mejl'],
    forwardSubjects: ['vb', 'fw', 'vidarebefordrat'],
    devicePrefixes: ['skickat från', 'skickades från', 'skickat med', 'hämta outlook för', 'skaffa outlook för'],
    deviceSuffixes: [],
  },
  fi: {
    attributionOpeners: [],
    attributionVerbs: ['kirjoitti', 'on kirjoittanut'],
    fields: { from: ['lähettäjä'], date: ['lähetetty', 'päivämäärä', 'päiväys'], to: ['vastaanottaja'], cc: ['kopio'], subject: ['aihe'] },
    separators: ['alkuperäinen viesti'],
    forwards: ['välitetty viesti', 'välitetty viesti alkaa', 'edelleenlähetetty viesti'],
    forwardSubjects: ['vl', 'fw'],
    devicePrefixes: [
      'lähetetty iphone', 'lähetetty ipad', 'lähetetty android', 'lähetetty outlook', 'lähetetty samsung', 'lähetetty galaxy', 'lähetetty mobiili',
      'lähetetty laitteesta', 'lähetetty windows…sovelluksesta', 'lähetetty yahoo', 'hanki outlook',
    ],
    deviceSuffixes: [],
  },
  pl: {
    attributionOpeners: ['w dniu', 'dnia', 'dn.'],
    attributionVerbs: ['napisał', 'napisała', 'napisał(a)', 'pisze', 'napisano', 'napisana przez'],
    fields: { from: ['od', 'nadawca'], date: ['wysłano', 'wysłane', 'data'], to: ['do', 'adresat'], cc: ['dw', 'kopia'], subject: ['temat'] },
    separators: ['wiadomość oryginalna', 'oryginalna wiadomość'],
    forwards: ['przekazana wiadomość', 'początek przekazywanej wiadomości', 'przesłana wiadomość'],
    forwardSubjects: ['pd', 'fw', 'przek'],
    devicePrefixes: ['wysłane z', 'wysłano z', 'pobierz program outlook', 'pobierz aplikację outlook'],
    deviceSuffixes: [],
  },
  cs: {
    attributionOpeners: ['dne'],
    attributionVerbs: ['napsal', 'napsala', 'napsal(a)', 'píše'],
    fields: { from: ['od', 'odesílatel'], date: ['odesláno', 'datum'], to: ['komu', 'příjemce'], cc: ['kopie'], subject: ['předmět'] },
    separators: ['původní zpráva', 'původní e-mail'],
    forwards: ['přeposlaná zpráva', 'začátek přeposlané zprávy'],
    forwardSubjects: ['fw', 'přeposl'],
    devicePrefixes: ['odesláno z', 'odeslaný z', 'odesláno ze', 'stáhněte si outlook'],
    deviceSuffixes: [],
  },
  ru: {
    attributionOpeners: ['в', 'от'],
    attributionVerbs: ['написал', 'написала', 'написал(а)', 'пишет', 'писал'],
    fields: { from: ['от', 'отправитель'], date: ['отправлено', 'дата', 'отправлен'], to: ['кому', 'получатель'], cc: ['копия', 'кол'], subject: ['тема'] },
    separators: ['исходное сообщение', 'оригинальное сообщение'],
    forwards: ['пересылаемое сообщение', 'начало переадресованного сообщения', 'пересланное сообщение', 'начало пересылаемого сообщения'],
    forwardSubjects: ['пересл', 'fw'],
    devicePrefixes: ['отправлено с', 'отправлено из', 'отправлено через', 'получить outlook для', 'скачайте outlook для'],
    deviceSuffixes: [],
  },
  uk: {
    attributionOpeners: ['в', 'о'],
    attributionVerbs: ['пише', 'написав', 'написала', 'написав(ла)'],
    fields: { from: ['від', 'відправник'], date: ['надіслано', 'дата', 'відправлено'], to: ['кому', 'отримувач'], cc: ['копія'], subject: ['тема'] },
    separators: ['початкове повідомлення', 'оригінальне повідомлення'],
    forwards: ['переслане повідомлення', 'пересланий лист', 'початок пересланого листа'],
    forwardSubjects: ['пересл', 'fw'],
    devicePrefixes: ['надіслано з', 'відправлено з', 'надіслано із', 'завантажте outlook для', 'отримати outlook для', 'отримайте outlook для'],
    deviceSuffixes: [],
  },
  tr: {
    attributionOpeners: [],
    attributionVerbs: ['yazdı', 'şunu yazdı', 'şöyle yazdı'],
    fields: { from: ['kimden', 'gönderen'], date: ['gönderildi', 'gönderilme tarihi', 'tarih'], to: ['kime', 'alıcı'], cc: ['bilgi', 'cc'], subject: ['konu'] },
    separators: ['orijinal mesaj', 'özgün ileti', 'orijinal ileti'],
    forwards: ['iletilen ileti', 'iletilen mesaj', 'yönlendirilmiş mesaj', 'yönlendirilen mesaj', 'iletilmiş ileti'],
    forwardSubjects: ['ilt', 'fw', 'ilet'],
    devicePrefixes: ['samsung galaxy akıllı telefonumdan…gönderildi'],
    deviceSuffixes: ['gönderildi', 'edinin'],
  },
  sk: {
    attributionOpeners: ['dňa', 'dna'],
    attributionVerbs: ['napísal', 'napísala', 'napísal(a)', 'píše'],
    fields: { from: ['od', 'odosielateľ'], date: ['odoslané', 'dátum'], to: ['komu', 'príjemca'], cc: ['kópia'], subject: ['predmet'] },
    separators: ['pôvodná správa'],
    forwards: ['preposlaná správa', 'začiatok preposlanej správy'],
    forwardSubjects: ['fw', 'pp'],
    devicePrefixes: ['odoslané z', 'odoslané zo'],
    deviceSuffixes: [],
  },
  hr: {
    attributionOpeners: ['dana'],
    attributionVerbs: ['napisao', 'napisala', 'napisao/la', 'je napisao', 'je napisala'],
    fields: { from: ['šalje', 'pošiljatelj'], date: ['poslano', 'datum'], to: ['prima', 'primatelj'], cc: ['kopija'], subject: ['predmet'] },
    separators: ['izvorna poruka', 'originalna poruka'],
    forwards: ['proslijeđena poruka', 'početak proslijeđene poruke'],
    forwardSubjects: ['fw', 'prosl'],
    devicePrefixes: ['poslano s', 'poslano sa'],
    deviceSuffixes: [],
  },
  hu: {
    attributionOpeners: [],
    attributionVerbs: ['írta', 'ezt írta'],
    fields: { from: ['feladó'], date: ['elküldve', 'dátum', 'küldve'], to: ['címzett'], cc: ['másolat'], subject: ['tárgy'] },
    separators: ['eredeti üzenet'],
    forwards: ['továbbított üzenet', 'továbbított levél', 'továbbított levél kezdete'],
    forwardSubjects: ['fw', 'tov'],
    devicePrefixes: [],
    deviceSuffixes: ['küldve'],
  },
  ro: {
    attributionOpeners: ['pe', 'în data de'],
    attributionVerbs: ['a scris'],
    fields: { from: ['de la', 'expeditor'], date: ['trimis', 'data'], to: ['către', 'catre'], cc: ['cc'], subject: ['subiect'] },
    separators: ['mesaj original', 'mesajul original'],
    forwards: ['mesaj redirecționat', 'mesaj redirectionat', 'începutul mesajului redirecționat'],
    forwardSubjects: ['fw', 'fwd'],
    devicePrefixes: ['trimis de pe', 'trimis din', 'trimis cu'],
    deviceSuffixes: [],
  },
  el: {
    attributionOpeners: ['στις', 'την'],
    attributionVerbs: ['έγραψε', 'έγραψε ο', 'έγραψε η'],
    fields: { from: ['από', 'αποστολέας'], date: ['στάλθηκε', 'ημερομηνία'], to: ['προς'], cc: ['κοιν'], subject: ['θέμα'] },
    separators: ['αρχικό μήνυμα'],
    forwards: ['προωθημένο μήνυμα', 'έναρξη προωθημένου μηνύματος'],
    forwardSubjects: ['fw', 'πρθ'],
    devicePrefixes: ['στάλθηκε από', 'εστάλη από'],
    deviceSuffixes: [],
  },
  id: {
    attributionOpeners: ['pada'],
    attributionVerbs: ['menulis'],
    fields: { from: ['dari', 'pengirim'], date: ['dikirim', 'tanggal'], to: ['kepada', 'ke'], cc: ['cc', 'tembusan'], subject: ['perihal', 'subjek'] },
    separators: ['pesan asli'],
    forwards: ['pesan yang diteruskan', 'pesan terusan', 'awal pesan yang diteruskan'],
    forwardSubjects: ['fw', 'fwd'],
    devicePrefixes: ['dikirim dari', 'terkirim dari'],
    deviceSuffixes: [],
  },
  vi: {
    attributionOpeners: ['vào'],
    attributionVerbs: ['đã viết'],
    fields: { from: ['từ', 'người gửi'], date: ['đã gửi', 'gửi', 'ngày gửi', 'ngày'], to: ['đến', 'tới'], cc: ['cc'], subject: ['chủ đề', 'tiêu đề'] },
    separators: ['thư gốc', 'tin nhắn gốc'],
    forwards: ['thư đã chuyển tiếp', 'tin nhắn được chuyển tiếp', 'bắt đầu tin nhắn được chuyển tiếp'],
    forwardSubjects: ['fw', 'fwd'],
    devicePrefixes: ['được gửi từ', 'gửi từ'],
    deviceSuffixes: [],
  },
  ja: {
    attributionOpeners: [],
    attributionVerbs: ['のメッセージ', 'のメール', 'が書きました', 'は書きました', '次のように書きました'],
    fields: { from: ['差出人', '送信者'], date: ['送信日時', '日付', '送信日'], to: ['宛先', '受信者'], cc: ['cc'], subject: ['件名'] },
    separators: ['元のメッセージ', 'オリジナルメッセージ'],
    forwards: ['転送されたメッセージ', '転送メッセージ'],
    forwardSubjects: ['転送', 'fw'],
    devicePrefixes: [],
    deviceSuffixes: ['から送信', 'より送信', 'から送信しました', 'からの送信', 'を入手'],
  },
  zh: {
    attributionOpeners: ['在', '於'],
    attributionVerbs: ['写道', '寫道', '寫了'],
    fields: { from: ['发件人', '寄件者', '寄件人', '發件人'], date: ['发送时间', '日期', '时间', '寄件日期', '傳送時間', '發送時間', '发送日期'], to: ['收件人', '收件者'], cc: ['抄送', '副本', '抄送人'], subject: ['主题', '主旨', '主題'] },
    separators: ['原始邮件', '邮件原件', '原始郵件', '回复的原邮件'],
    forwards: ['转发的邮件', '转发邮件', '轉寄的郵件', '以下是转发的邮件', '轉寄郵件', '转发邮件信息', '转发的消息', '转发消息', '轉寄的訊息', '轉寄訊息'],
    forwardSubjects: ['转发', '轉寄', 'fw'],
    devicePrefixes: ['发自我的', '從我的…傳送', '从我的…发送', '發自我的', '发自', '寄自我的', '获取 outlook', '取得 outlook', '获取 ios', '获取 android', '取得 ios', '取得 android'],
    deviceSuffixes: ['发送', '傳送'],
  },
  ko: {
    attributionOpeners: [],
    attributionVerbs: ['작성', '님이 작성', '님이 씀', '이(가) 쓴 글'],
    fields: { from: ['보낸 사람', '보낸사람'], date: ['보낸 날짜', '날짜', '보낸날짜'], to: ['받는 사람', '받는사람'], cc: ['참조'], subject: ['제목'] },
    separators: ['원본 메시지', '원래 메시지', '원본 메일'],
    forwards: ['전달된 메시지', '전달된 메일'],
    forwardSubjects: ['전달', 'fw'],
    devicePrefixes: [],
    deviceSuffixes: ['에서 보냄', '에서 보냈습니다', '에서 보낸 메일', '에서 발송', '받기'],
  },
  ar: {
    attributionOpeners: ['في', 'فى'],
    attributionVerbs: ['كتب', 'كتبت', 'كتب ما يلي', 'تمت كتابة ما يلي بواسطة'],
    fields: { from: ['من', 'المرسل'], date: ['تاريخ الإرسال', 'التاريخ', 'أرسل', 'أُرسل', 'تم الإرسال'], to: ['إلى', 'الى'], cc: ['نسخة', 'نسخة إلى'], subject: ['الموضوع'] },
    separators: ['الرسالة الأصلية'],
    forwards: ['الرسالة المعاد توجيهها', 'رسالة محولة', 'بداية الرسالة المُعاد توجيهها', 'الرسالة المُعاد توجيهها'],
    forwardSubjects: ['إعادة توجيه', 'fw'],
    devicePrefixes: ['أرسلت من', 'أُرسلت من', 'مرسل من', 'تم الإرسال من', 'أرسل من', 'احصل على outlook', 'الحصول على outlook'],
    deviceSuffixes: [],
  },
  he: {
    attributionOpeners: ['בתאריך', 'ב-'],
    attributionVerbs: ['כתב', 'כתבה', 'כתב/ה'],
    fields: { from: ['מאת'], date: ['נשלח', 'תאריך'], to: ['אל'], cc: ['עותק'], subject: ['נושא'] },
    separators: ['הודעה מקורית', 'ההודעה המקורית'],
    forwards: ['הודעה שהועברה', 'תחילת הודעה שהועברה', 'תחילת הודעה מועברת', 'הודעה מועברת'],
    forwardSubjects: ['הועבר', 'fw'],
    devicePrefixes: ['נשלח מ', 'נשלח מה', 'נשלח באמצעות', 'קבל את outlook', 'השג את outlook'],
    deviceSuffixes: [],
  },
};

/**
 * Subject prefixes of a reply (any language): a header block whose From has neither a date nor an
 * address beside it is one when its subject says it answers ("From: Smith, John / To: ... /
 * Subject: RE: budget"), unlike a memo's ("Subject: closing for the holidays"); and a message
 * whose own subject starts with one is a reply. Not "VS:", a Finnish reply but a Danish forward.
 */
export const REPLY_SUBJECTS = ['re', 'aw', 'sv', 'antw', 'odp', 'res', 'rif', 'r', 'ynt', 'vá', 'отв', 'відп', '回复', '答复', '回覆', '返信', 'رد'];

/** Brands of devices and mail apps: a verb-last device line may open with one and end with a full stop ("Samsung Galaxy ... gönderildi."). */
export const DEVICE_BRANDS = [
  'iphone', 'ipad', 'ipod', 'android', 'outlook', 'samsung', 'galaxy', 'blackberry', 'yahoo', 'gmail', 'proton', 'zoho', 'fastmail',
  'typeapp', 'windows', 'huawei', 'xiaomi', 'pixel', 'droid',
];

/** Devices and apps a suffix-matched device line must name (any language, matched as substrings). */
export const DEVICE_WORDS = [
  ...DEVICE_BRANDS, 'mobile', 'smartphone', 'handy', 'telefon', 'phone', 'mail', 'posta', 'tablet', 'app', '手机', '手機', 'スマートフォン', '携帯',
  '휴대폰', '갤럭시', '모바일', 'почт', 'телефон',
];

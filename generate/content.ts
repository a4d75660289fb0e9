// Editorial content for the source-data generator: articles (city guides built from the city table plus general
// guides) and the glossary of Dutch rental terms. Translations are deliberately partial, so locale fallback to
// English is visible in the API.
import type { ArticleRec, GlossaryRec, Locale } from '../build-snapshot/source-schema.ts';
import { CITIES } from './places.ts';
import {
  chance,
  DAY_MS,
  int,
  iso,
  type LocaleSet,
  localized,
  pad,
  pickLocales,
  REFERENCE_MS,
  rngFor,
  slugify,
  type Tr,
} from './random.ts';

const ALL: LocaleSet = ['en', 'nl', 'de', 'fr', 'es'];
const AND: Tr = { en: 'and', nl: 'en', de: 'und', fr: 'et', es: 'y' };
const OR: Tr = { en: 'or', nl: 'of', de: 'oder', fr: 'ou', es: 'o' };
const joinList = (items: string[], word: string) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${word} ${items.at(-1)}`;
/** French "de" with elision before a vowel: "d'Amsterdam", "de La Haye". */
/** 2100 → "2,100" (en), "2 100" (fr), "2.100" (nl, de, es); no Intl, so output never depends on ICU data. */
const thousands = (n: number, l: Locale) =>
  String(n).replace(/\B(?=(\d{3})+$)/g, l === 'en' ? ',' : l === 'fr' ? ' ' : '.');
const deFr = (name: string) => (/^[AEIOUYÉ]/.test(name) ? `d'${name}` : `de ${name}`);

const GUIDE: Record<'title' | 'description' | 'content', Tr> = {
  title: {
    en: 'Renting in {city}: neighbourhoods and prices',
    nl: 'Huren in {city}: wijken en prijzen',
    de: 'Mieten in {city}: Viertel und Preise',
    fr: 'Louer à {city} : quartiers et prix',
    es: 'Alquilar en {city}: barrios y precios',
  },
  description: {
    en: 'What to expect when you look for a rental home in {city}, from popular neighbourhoods to typical rents.',
    nl: 'Wat je kunt verwachten als je een huurwoning zoekt in {city}: populaire wijken en gangbare huurprijzen.',
    de: 'Was Sie bei der Wohnungssuche in {city} erwartet: beliebte Viertel und übliche Mieten.',
    fr: 'Ce qui vous attend si vous cherchez une location à {city} : quartiers prisés et loyers habituels.',
    es: 'Qué esperar al buscar un alquiler en {city}: barrios populares y precios habituales.',
  },
  content: {
    en: '## Neighbourhoods\n\nPopular neighbourhoods in {city} include {list}.\n\n## Rents\n\nIn this sample data set a typical two- or three-room apartment in {city} is advertised for around €{median} per month. Postcodes in {city} start with {prefixes}.\n\n## Before you sign\n\nRegister at the municipality (BRP) when you move in, ask for the energy label and check whether the home is in the social, mid-rent or free sector.',
    nl: '## Wijken\n\nPopulaire wijken in {city} zijn onder meer {list}.\n\n## Huurprijzen\n\nIn deze voorbeelddataset wordt een gemiddeld twee- of driekamerappartement in {city} aangeboden voor ongeveer € {median} per maand. Postcodes in {city} beginnen met {prefixes}.\n\n## Voordat je tekent\n\nSchrijf je bij de gemeente in (BRP) als je verhuist, vraag naar het energielabel en controleer of de woning in de sociale huur, de middenhuur of de vrije sector valt.',
    de: '## Stadtviertel\n\nBeliebte Viertel in {city} sind unter anderem {list}.\n\n## Mieten\n\nIn diesem Beispieldatensatz wird eine typische Zwei- oder Dreizimmerwohnung in {city} für etwa {median} € pro Monat angeboten. Postleitzahlen in {city} beginnen mit {prefixes}.\n\n## Vor der Unterschrift\n\nMelden Sie sich beim Einzug bei der Gemeinde an (BRP), fragen Sie nach dem Energielabel und prüfen Sie, ob die Wohnung zum sozialen, mittleren oder freien Mietsektor gehört.',
    fr: "## Quartiers\n\nParmi les quartiers prisés {de_city} figurent {list}.\n\n## Loyers\n\nDans ce jeu de données d'exemple, un appartement typique de deux ou trois pièces à {city} est proposé pour environ {median} € par mois. Les codes postaux {de_city} commencent par {prefixes}.\n\n## Avant de signer\n\nInscrivez-vous auprès de la commune (BRP) à votre arrivée, demandez l'étiquette énergétique et vérifiez si le logement relève du secteur social, intermédiaire ou libre.",
    es: '## Barrios\n\nEntre los barrios más populares de {city} están {list}.\n\n## Alquileres\n\nEn este conjunto de datos de ejemplo, un apartamento típico de dos o tres habitaciones en {city} se anuncia por unos {median} € al mes. Los códigos postales de {city} empiezan por {prefixes}.\n\n## Antes de firmar\n\nEmpadrónate en el municipio (BRP) al mudarte, pide la etiqueta energética y comprueba si la vivienda pertenece al sector social, al de alquiler medio o al libre.',
  },
};

interface ArticleDef {
  category: string;
  title: Tr;
  description: Tr;
  content: Tr;
  published?: false;
}

const ARTICLES: ArticleDef[] = [
  {
    category: 'finance',
    title: {
      en: 'How rent benefit (huurtoeslag) works',
      nl: 'Zo werkt huurtoeslag',
      de: 'So funktioniert der Mietzuschuss (huurtoeslag)',
    },
    description: {
      en: 'Who can get a government contribution towards the rent, and how to apply.',
      nl: 'Wie een bijdrage van de overheid in de huur kan krijgen en hoe je die aanvraagt.',
      de: 'Wer einen staatlichen Zuschuss zur Miete erhalten kann und wie man ihn beantragt.',
    },
    content: {
      en: 'Rent benefit (huurtoeslag) is a monthly contribution towards the rent for tenants with a low income. The amount depends on your income, your assets, your rent and your household.\n\n## Applying\n\nYou apply online with DigiD at the Dienst Toeslagen. Report changes in income or household promptly to avoid having to pay benefit back.',
      nl: 'Huurtoeslag is een maandelijkse bijdrage in de huur voor huurders met een laag inkomen. Het bedrag hangt af van je inkomen, je vermogen, je huur en je huishouden.\n\n## Aanvragen\n\nJe vraagt huurtoeslag online aan met DigiD bij de Dienst Toeslagen. Geef wijzigingen in inkomen of huishouden snel door, zodat je niets hoeft terug te betalen.',
    },
  },
  {
    category: 'finance',
    title: { en: 'Service costs explained', nl: 'Servicekosten uitgelegd', fr: 'Les charges locatives expliquées' },
    description: {
      en: 'What landlords may charge on top of the bare rent, and how the yearly statement works.',
      nl: 'Wat een verhuurder bovenop de kale huur mag rekenen en hoe de jaarlijkse afrekening werkt.',
      fr: 'Ce que le bailleur peut facturer en plus du loyer hors charges et comment fonctionne le décompte annuel.',
    },
    content: {
      en: 'Service costs (servicekosten) pay for extras such as cleaning of shared areas, lighting of the stairwell or furniture. They come on top of the bare rent (kale huur).\n\nThe landlord must send a yearly statement of the actual costs. If you disagree with the statement, you can ask the Rent Tribunal (Huurcommissie) to assess it.',
      nl: 'Servicekosten betalen voor extra’s zoals schoonmaak van gemeenschappelijke ruimtes, verlichting van het trappenhuis of meubels. Ze komen bovenop de kale huur.\n\nDe verhuurder moet elk jaar een overzicht van de werkelijke kosten sturen. Ben je het er niet mee eens, dan kun je de Huurcommissie om een oordeel vragen.',
    },
  },
  {
    category: 'legal',
    title: {
      en: 'The deposit (waarborgsom): how much and when you get it back',
      nl: 'De waarborgsom: hoeveel en wanneer je die terugkrijgt',
      de: 'Die Kaution (waarborgsom): Höhe und Rückzahlung',
      es: 'La fianza (waarborgsom): cuánto y cuándo se devuelve',
    },
    description: {
      en: 'Rules for the maximum deposit and the deadline for repayment.',
      nl: 'Regels voor de maximale borg en de termijn voor terugbetaling.',
      de: 'Regeln zur maximalen Kaution und zur Frist für die Rückzahlung.',
      es: 'Normas sobre la fianza máxima y el plazo de devolución.',
    },
    content: {
      en: 'For tenancies that started on or after 1 July 2023 the deposit may be at most twice the bare monthly rent.\n\nAfter the tenancy ends, the landlord must repay the deposit within 14 days, or within 30 days if there is damage to the home that is deducted.',
      nl: 'Voor huurovereenkomsten vanaf 1 juli 2023 is de waarborgsom maximaal twee keer de kale maandhuur.\n\nNa afloop van de huur moet de verhuurder de borg binnen 14 dagen terugbetalen, of binnen 30 dagen als er schade wordt verrekend.',
    },
  },
  {
    category: 'legal',
    title: {
      en: 'The points system (WWS) and maximum rents',
      nl: 'Het puntensysteem (WWS) en de maximale huur',
      fr: 'Le système de points (WWS) et les loyers maximaux',
    },
    description: {
      en: 'How points for size, energy label and facilities cap the rent of social and mid-rent homes.',
      nl: 'Hoe punten voor oppervlakte, energielabel en voorzieningen de huur van sociale en middenhuurwoningen begrenzen.',
      fr: 'Comment les points attribués à la surface, à l’étiquette énergétique et aux équipements plafonnent les loyers.',
    },
    content: {
      en: 'The home valuation system (woningwaarderingsstelsel, WWS) awards points for the size of the home, its energy label, the kitchen and bathroom, outdoor space and more.\n\nSince July 2024 the points also set a maximum rent for mid-rent homes. You can check your rent with the points calculator of the Rent Tribunal.',
    },
  },
  {
    category: 'legal',
    title: {
      en: 'Temporary or indefinite: types of tenancy agreement',
      nl: 'Tijdelijk of onbepaalde tijd: soorten huurcontracten',
      es: 'Temporal o indefinido: tipos de contrato de alquiler',
    },
    description: {
      en: 'Since July 2024 an indefinite contract is the norm; these are the exceptions.',
      nl: 'Sinds juli 2024 is een contract voor onbepaalde tijd de norm; dit zijn de uitzonderingen.',
      es: 'Desde julio de 2024 el contrato indefinido es la norma; estas son las excepciones.',
    },
    content: {
      en: 'Since 1 July 2024 landlords must in principle offer a contract for an indefinite period. Temporary contracts remain possible in specific cases, for example for students or when the landlord will move back into the home.\n\nRead the contract carefully and ask which exception applies if you are offered a temporary contract.',
    },
  },
  {
    category: 'moving',
    title: {
      en: 'Registering your address (BRP) after you move',
      nl: 'Je adres inschrijven (BRP) na een verhuizing',
      de: 'Adresse nach dem Umzug anmelden (BRP)',
    },
    description: {
      en: 'Why and when to register at your new municipality.',
      nl: 'Waarom en wanneer je je inschrijft bij je nieuwe gemeente.',
      de: 'Warum und wann Sie sich bei Ihrer neuen Gemeinde anmelden.',
    },
    content: {
      en: 'Everyone who lives in the Netherlands must be registered at their address in the Personal Records Database (BRP). Register within five days of moving.\n\nYou need the registration for your citizen service number (BSN), rent benefit and many other services. Some landlords do not allow registration: that is a red flag.',
      nl: 'Iedereen die in Nederland woont, moet op zijn adres staan ingeschreven in de Basisregistratie Personen (BRP). Schrijf je binnen vijf dagen na je verhuizing in.\n\nJe hebt de inschrijving nodig voor je burgerservicenummer (BSN), huurtoeslag en veel andere diensten. Staat een verhuurder inschrijving niet toe, dan is dat een waarschuwingssignaal.',
      de: 'Wer in den Niederlanden wohnt, muss mit seiner Adresse im Personenregister (BRP) gemeldet sein. Melden Sie sich innerhalb von fünf Tagen nach dem Umzug an.\n\nDie Anmeldung brauchen Sie für Ihre Bürgerservicenummer (BSN), den Mietzuschuss und viele andere Leistungen. Verbietet ein Vermieter die Anmeldung, ist das ein Warnsignal.',
    },
  },
  {
    category: 'renting_basics',
    title: {
      en: 'Energy labels and what they mean for your bills',
      nl: 'Energielabels en wat ze betekenen voor je rekening',
    },
    description: {
      en: 'From A+++ to G: how the label predicts your energy costs.',
      nl: 'Van A+++ tot G: wat het label zegt over je energiekosten.',
    },
    content: {
      en: 'The energy label rates a home from A+++ (very efficient) to G (inefficient). A better label usually means lower energy bills and a warmer home.\n\nThe label also counts in the points system, so it affects the maximum rent of regulated homes.',
    },
  },
  {
    category: 'students',
    title: {
      en: 'Finding a room as a student',
      nl: 'Een studentenkamer vinden',
      de: 'Ein WG-Zimmer als Student finden',
      fr: 'Trouver une chambre quand on est étudiant',
      es: 'Encontrar una habitación siendo estudiante',
    },
    description: {
      en: 'Start early, register with student housing providers and prepare for hospiteren.',
      nl: 'Begin op tijd, schrijf je in bij studentenhuisvesters en bereid je voor op hospiteren.',
      de: 'Früh anfangen, bei Studentenwohnheimen registrieren und auf das hospiteren vorbereiten.',
      fr: 'Commencez tôt, inscrivez-vous auprès des bailleurs étudiants et préparez le hospiteren.',
      es: 'Empieza pronto, inscríbete en las residencias de estudiantes y prepárate para el hospiteren.',
    },
    content: {
      en: 'Student rooms are scarce in cities such as Amsterdam, Utrecht and Groningen. Register with student housing providers as early as possible, because registration time often decides who gets a room.\n\nIn shared houses the current residents often choose their new housemate in a hospiteeravond: be yourself and ask questions.',
    },
  },
  {
    category: 'renting_basics',
    title: {
      en: 'How to recognise rental scams',
      nl: 'Zo herken je oplichting bij huren',
      es: 'Cómo reconocer estafas en el alquiler',
    },
    description: {
      en: 'Warning signs of fake listings and how to protect yourself.',
      nl: 'Waarschuwingssignalen van nepadvertenties en hoe je jezelf beschermt.',
      es: 'Señales de anuncios falsos y cómo protegerte.',
    },
    content: {
      en: 'Never pay a deposit or rent before you have seen the home and signed a contract. Be wary of landlords who are "abroad" and cannot show the home.\n\nOnly send a copy of your passport with your photo and citizen service number masked.',
    },
  },
  {
    category: 'renting_basics',
    title: {
      en: 'Furnished, upholstered or shell: what is included?',
      nl: 'Gemeubileerd, gestoffeerd of kaal: wat krijg je?',
      fr: 'Meublé, semi-meublé ou vide : que comprend la location ?',
    },
    description: {
      en: 'The three furnishing levels you see in Dutch listings.',
      nl: 'De drie opleveringsniveaus die je in advertenties ziet.',
      fr: 'Les trois niveaux d’ameublement des annonces néerlandaises.',
    },
    content: {
      en: 'A **shell** (kaal) home has no flooring, curtains or light fittings. An **upholstered** (gestoffeerd) home has flooring and curtains but no furniture. A **furnished** (gemeubileerd) home also has furniture.\n\nFurnished homes usually cost more, and part of the rent may be charged as service costs for the furniture.',
      nl: 'Een **kale** woning heeft geen vloer, gordijnen of lampen. Een **gestoffeerde** woning heeft vloerbedekking en gordijnen, maar geen meubels. Een **gemeubileerde** woning heeft ook meubels.\n\nGemeubileerde woningen zijn meestal duurder en een deel van de huur kan als servicekosten voor de meubels worden gerekend.',
    },
  },
  {
    category: 'legal',
    title: { en: 'Subletting your rental home: what is allowed?', nl: 'Onderhuur: wat mag wel en niet?' },
    description: {
      en: 'Renting out (part of) your home to someone else.',
      nl: 'Je (deel van je) huurwoning aan iemand anders verhuren.',
    },
    content: {
      en: 'Subletting an entire self-contained home without the landlord’s permission is not allowed. Renting out a room in the home you live in yourself is often possible, but check your contract first.\n\nAsk your landlord for written permission before you sublet.',
    },
  },
  {
    category: 'moving',
    title: { en: 'Setting up internet and insurance in your new home' },
    description: { en: 'A checklist for the first weeks after you move in.' },
    content: {
      en: 'Check which internet connections are available at your address with your postcode and house number, and arrange contents and liability insurance from the day you get the keys.',
    },
    published: false,
  },
];

export function buildArticles(seed: number, cityIds: string[]): ArticleRec[] {
  const rng = rngFor(seed, 'articles');
  const out: ArticleRec[] = [];
  const stamp = () => {
    const created = REFERENCE_MS - int(rng, 30, 900) * DAY_MS - int(rng, 0, 86_399) * 1000;
    const updated = chance(rng, 0.4) ? created : Math.min(REFERENCE_MS - DAY_MS, created + int(rng, 1, 300) * DAY_MS);
    return { created_at: iso(created), updated_at: iso(updated) };
  };
  const guides = 18;
  for (let ci = 0; ci < guides; ci++) {
    const c = CITIES[ci]!;
    const locales = ci === 0 ? ALL : pickLocales(rng, { nl: 0.75, de: 0.3, fr: 0.3, es: 0.3 });
    const cityName = (l: Locale) => c.name[l] ?? c.name.en;
    const fill = (tpl: string, l: Locale) =>
      tpl
        .replaceAll('{de_city}', deFr(cityName(l)))
        .replaceAll('{city}', cityName(l))
        .replace(
          '{list}',
          joinList(
            c.neighbourhoods
              .filter((n) => !n.planned)
              .slice(0, 4)
              .map((n) => n.name),
            AND[l]!,
          ),
        )
        .replace('{median}', thousands(c.medianRent, l))
        .replace('{prefixes}', joinList(c.prefixes, OR[l]!));
    out.push({
      id: `art_${pad(out.length + 1, 4)}`,
      slug: `renting-in-${slugify(c.name.en)}`,
      title: localized(locales, (l) => fill(GUIDE.title[l]!, l)),
      description: localized(locales, (l) => fill(GUIDE.description[l]!, l)),
      content: localized(locales, (l) => fill(GUIDE.content[l]!, l)),
      category: 'city_guide',
      location_id: cityIds[ci]!,
      published: ci !== guides - 1, // the last guide is still a draft
      ...stamp(),
    });
  }
  for (const a of ARTICLES) {
    out.push({
      id: `art_${pad(out.length + 1, 4)}`,
      slug: slugify(a.title.en),
      title: a.title,
      description: chance(rng, 0.9) ? a.description : null,
      content: a.content,
      category: a.category,
      location_id: null,
      published: a.published ?? true,
      ...stamp(),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------- glossary

const GLOSSARY: { term: string; definition: Tr; published?: false }[] = [
  {
    term: 'huurtoeslag',
    definition: {
      en: 'Rent benefit: a monthly government contribution towards the rent for tenants with a low income. The amount depends on income, assets, rent and household; you apply at the Dienst Toeslagen.',
      nl: 'Maandelijkse bijdrage van de overheid in de huur voor huurders met een laag inkomen. Het bedrag hangt af van inkomen, vermogen, huur en huishouden; je vraagt het aan bij de Dienst Toeslagen.',
      de: 'Mietzuschuss: ein monatlicher staatlicher Zuschuss zur Miete für Mieter mit geringem Einkommen. Die Höhe hängt von Einkommen, Vermögen, Miete und Haushalt ab; beantragt wird er bei der Dienst Toeslagen.',
      fr: "Allocation logement : contribution mensuelle de l'État au loyer des locataires à faibles revenus. Le montant dépend des revenus, du patrimoine, du loyer et du foyer ; la demande se fait auprès de la Dienst Toeslagen.",
      es: 'Subsidio de alquiler: aportación mensual del Estado al alquiler para inquilinos con ingresos bajos. La cuantía depende de los ingresos, el patrimonio, el alquiler y el hogar; se solicita a la Dienst Toeslagen.',
    },
  },
  {
    term: 'servicekosten',
    definition: {
      en: 'Service costs: charges on top of the bare rent for extra services such as cleaning of shared areas, stairwell lighting or furniture. The landlord must send a yearly statement of the actual costs.',
      nl: 'Kosten bovenop de kale huur voor extra diensten, zoals schoonmaak van gemeenschappelijke ruimtes, verlichting van het trappenhuis of meubels. De verhuurder moet jaarlijks een overzicht van de werkelijke kosten sturen.',
      de: 'Nebenkosten: Beträge zusätzlich zur Kaltmiete für Leistungen wie die Reinigung von Gemeinschaftsflächen, die Treppenhausbeleuchtung oder Möbel. Der Vermieter muss jährlich eine Abrechnung der tatsächlichen Kosten schicken.',
      fr: "Charges : montants qui s'ajoutent au loyer hors charges pour des services comme le nettoyage des parties communes, l'éclairage de la cage d'escalier ou le mobilier. Le bailleur doit envoyer chaque année un décompte des frais réels.",
    },
  },
  {
    term: 'waarborgsom',
    definition: {
      en: 'Deposit paid at the start of the tenancy as security. For contracts since 1 July 2023 it is at most twice the bare monthly rent and must be repaid within 14 days after the tenancy ends (30 days if damage is deducted).',
      nl: 'Borg die je aan het begin van de huur betaalt als zekerheid. Voor contracten vanaf 1 juli 2023 is die maximaal twee keer de kale maandhuur en moet hij binnen 14 dagen na het einde van de huur worden terugbetaald (30 dagen als er schade wordt verrekend).',
      de: 'Kaution, die zu Beginn des Mietverhältnisses als Sicherheit gezahlt wird. Bei Verträgen ab dem 1. Juli 2023 beträgt sie höchstens zwei Kaltmieten und muss innerhalb von 14 Tagen nach Mietende zurückgezahlt werden (30 Tage, wenn Schäden verrechnet werden).',
      es: 'Fianza que se paga al inicio del alquiler como garantía. En contratos desde el 1 de julio de 2023 es como máximo dos mensualidades de alquiler sin gastos y debe devolverse en 14 días tras el fin del alquiler (30 días si se descuentan daños).',
    },
  },
  {
    term: 'huurcommissie',
    definition: {
      en: 'Rent Tribunal: an independent body that settles disputes between tenants and landlords about the rent, service costs and maintenance.',
      nl: 'Onafhankelijke organisatie die geschillen tussen huurders en verhuurders beslecht over de huurprijs, servicekosten en onderhoud.',
      fr: 'Commission des loyers : organisme indépendant qui tranche les litiges entre locataires et bailleurs sur le loyer, les charges et l’entretien.',
    },
  },
  {
    term: 'puntensysteem (WWS)',
    definition: {
      en: 'The home valuation system (woningwaarderingsstelsel) that awards points for size, energy label and facilities; the number of points sets the maximum rent of social and mid-rent homes.',
      nl: 'Het woningwaarderingsstelsel, dat punten geeft voor oppervlakte, energielabel en voorzieningen; het aantal punten bepaalt de maximale huur van sociale en middenhuurwoningen.',
      de: 'Das Wohnungsbewertungssystem (woningwaarderingsstelsel), das Punkte für Größe, Energielabel und Ausstattung vergibt; die Punktzahl bestimmt die Höchstmiete von Sozial- und Mittelmietwohnungen.',
    },
  },
  {
    term: 'kale huur',
    definition: {
      en: 'Bare rent: the rent for the home itself, without service costs or utilities.',
      nl: 'De huur voor de woning zelf, zonder servicekosten en energie.',
      fr: 'Loyer hors charges : le loyer du logement lui-même, sans charges ni énergie.',
      es: 'Alquiler sin gastos: el precio de la vivienda en sí, sin gastos de servicios ni suministros.',
    },
  },
  {
    term: 'kaal',
    definition: {
      en: 'Shell: a home let without flooring, curtains or light fittings.',
      nl: 'Een woning die wordt verhuurd zonder vloerbedekking, gordijnen en lampen.',
    },
  },
  {
    term: 'gestoffeerd',
    definition: {
      en: 'Upholstered: a home let with flooring, curtains and often light fittings, but without furniture.',
      nl: 'Een woning met vloerbedekking, gordijnen en vaak lampen, maar zonder meubels.',
      de: 'Teilmöbliert: eine Wohnung mit Bodenbelag, Vorhängen und oft Leuchten, aber ohne Möbel.',
      es: 'Semiamueblado: vivienda con suelos, cortinas y a menudo lámparas, pero sin muebles.',
    },
  },
  {
    term: 'gemeubileerd',
    definition: {
      en: 'Furnished: a home let with furniture, so you can move in with just your personal belongings.',
      nl: 'Een woning met meubels, zodat je alleen je persoonlijke spullen hoeft mee te nemen.',
      de: 'Möbliert: eine Wohnung mit Möbeln, in die Sie nur mit Ihren persönlichen Sachen einziehen.',
      fr: 'Meublé : logement loué avec des meubles, où il suffit d’apporter ses affaires personnelles.',
      es: 'Amueblado: vivienda con muebles, a la que solo hay que llevar las pertenencias personales.',
    },
  },
  {
    term: 'huurcontract',
    definition: {
      en: 'Tenancy agreement. Since 1 July 2024 a contract for an indefinite period is the norm; temporary contracts are only allowed in specific cases, for example for students.',
      nl: 'Huurovereenkomst. Sinds 1 juli 2024 is een contract voor onbepaalde tijd de norm; tijdelijke contracten mogen alleen in bepaalde gevallen, bijvoorbeeld voor studenten.',
    },
  },
  {
    term: 'onderhuur',
    definition: {
      en: "Subletting: letting (part of) your rented home to someone else. You usually need the landlord's permission; check your contract.",
      nl: 'Het (gedeeltelijk) verhuren van je huurwoning aan iemand anders. Meestal heb je toestemming van de verhuurder nodig; kijk in je contract.',
    },
  },
  {
    term: 'hospiteren',
    definition: {
      en: 'A selection round in shared houses: the current housemates meet candidates and choose who gets the room.',
      nl: 'Selectie in een studentenhuis of woongroep: de huidige bewoners ontmoeten kandidaten en kiezen wie de kamer krijgt.',
      de: 'Auswahlrunde in Wohngemeinschaften: Die bisherigen Mitbewohner lernen Bewerber kennen und entscheiden, wer das Zimmer bekommt.',
      fr: 'Sélection en colocation : les colocataires actuels rencontrent les candidats et choisissent qui obtient la chambre.',
      es: 'Ronda de selección en pisos compartidos: los compañeros actuales conocen a los candidatos y eligen quién se queda la habitación.',
    },
  },
  {
    term: 'bemiddelingskosten',
    definition: {
      en: 'Agency fees. A letting agent who works for the landlord may not charge the tenant as well.',
      nl: 'Kosten van een makelaar. Een makelaar die voor de verhuurder werkt, mag de huurder geen bemiddelingskosten rekenen.',
      es: 'Honorarios de agencia. Un agente que trabaja para el propietario no puede cobrárselos también al inquilino.',
    },
  },
  {
    term: 'opzegtermijn',
    definition: {
      en: "Notice period. A tenant gives notice of at least one payment period, usually one month, and at most three months; the landlord's notice period is longer.",
      nl: 'De termijn waarmee je de huur opzegt. Voor huurders is dat minimaal één betalingstermijn, meestal een maand, en maximaal drie maanden; voor verhuurders is de termijn langer.',
    },
  },
  {
    term: 'woningcorporatie',
    definition: {
      en: 'Housing corporation: a non-profit landlord that mainly lets social housing.',
      nl: 'Een verhuurder zonder winstoogmerk die vooral sociale huurwoningen verhuurt.',
      fr: 'Bailleur social : organisme sans but lucratif qui loue surtout des logements sociaux.',
    },
  },
  {
    term: 'sociale huur',
    definition: {
      en: 'Social housing: homes with a regulated rent, allocated to households with a lower income, often by registration time.',
      nl: 'Woningen met een gereguleerde huur voor huishoudens met een lager inkomen, vaak toegewezen op inschrijfduur.',
      de: 'Sozialwohnungen: Wohnungen mit regulierter Miete für Haushalte mit geringerem Einkommen, oft nach Wartezeit vergeben.',
    },
  },
  {
    term: 'middenhuur',
    definition: {
      en: 'Mid-rent: the segment above social housing; since July 2024 its maximum rent is also set by the points system.',
      nl: 'Het segment boven de sociale huur; sinds juli 2024 wordt ook daarvan de maximale huur bepaald door het puntensysteem.',
    },
  },
  {
    term: 'vrije sector',
    definition: {
      en: 'Free sector: homes with a rent above the regulated segments. The starting rent is agreed freely, but yearly increases are capped.',
      nl: 'Woningen met een huur boven de gereguleerde segmenten. De aanvangshuur is vrij, maar de jaarlijkse huurverhoging is gemaximeerd.',
    },
  },
  {
    term: 'huurverhoging',
    definition: {
      en: 'Rent increase. Landlords may raise the rent once a year, within the maximum percentages set by the government.',
      nl: 'Een verhuurder mag de huur eens per jaar verhogen, binnen de maximale percentages die de overheid vaststelt.',
    },
  },
  {
    term: 'inschrijving BRP',
    definition: {
      en: 'Registering your address in the Personal Records Database (BRP) of your municipality, required within five days of moving.',
      nl: 'Inschrijving van je adres in de Basisregistratie Personen van je gemeente, verplicht binnen vijf dagen na een verhuizing.',
      de: 'Anmeldung Ihrer Adresse im Personenregister (BRP) Ihrer Gemeinde, innerhalb von fünf Tagen nach dem Umzug vorgeschrieben.',
      fr: 'Inscription de votre adresse au registre de la population (BRP) de votre commune, obligatoire dans les cinq jours suivant le déménagement.',
      es: 'Inscripción de tu dirección en el registro de población (BRP) de tu municipio, obligatoria en los cinco días siguientes a la mudanza.',
    },
  },
  {
    term: 'BSN',
    definition: {
      en: 'Citizen service number (burgerservicenummer): your personal identification number, which you receive when you register at a municipality.',
      nl: 'Burgerservicenummer: je persoonlijke identificatienummer, dat je krijgt als je je inschrijft bij een gemeente.',
    },
  },
  {
    term: 'DigiD',
    definition: {
      en: 'The digital identity used to log in to Dutch government services, for example to apply for rent benefit.',
      nl: 'De digitale identiteit waarmee je inlogt bij de overheid, bijvoorbeeld om huurtoeslag aan te vragen.',
    },
  },
  {
    term: 'energielabel',
    definition: {
      en: 'Energy label: a rating from A+++ (very efficient) to G (inefficient). It also counts in the points system.',
      nl: 'Een beoordeling van A+++ (zeer zuinig) tot G (onzuinig). Het label telt ook mee in het puntensysteem.',
      fr: 'Étiquette énergétique : classement de A+++ (très performant) à G (peu performant). Elle compte aussi dans le système de points.',
      es: 'Etiqueta energética: calificación de A+++ (muy eficiente) a G (poco eficiente). También cuenta en el sistema de puntos.',
    },
  },
  {
    term: 'VvE',
    definition: {
      en: "Owners' association (vereniging van eigenaars) that manages the shared parts of an apartment building.",
      nl: 'Vereniging van eigenaars die de gemeenschappelijke delen van een appartementengebouw beheert.',
    },
  },
  {
    term: 'inboedelverzekering',
    definition: {
      en: 'Contents insurance: covers your own belongings in your home against fire, theft and water damage.',
      nl: 'Verzekering van je eigen spullen in huis tegen brand, diefstal en waterschade.',
    },
  },
  {
    term: 'urgentieverklaring',
    definition: {
      en: 'Urgency declaration: a municipal statement that gives priority for social housing in acute situations.',
    },
  },
  {
    term: 'sleutelgeld',
    definition: {
      en: 'Key money: an extra payment demanded for the keys or the contract. Landlords may not ask for it.',
      nl: 'Extra betaling die wordt gevraagd voor de sleutels of het contract. Dat mag een verhuurder niet vragen.',
    },
    published: false,
  },
  {
    term: 'huisvestingsvergunning',
    definition: {
      en: 'Housing permit that some municipalities require before you may live in certain homes.',
    },
    published: false,
  },
];

export function buildGlossary(seed: number): GlossaryRec[] {
  const rng = rngFor(seed, 'glossary');
  return GLOSSARY.map((g, i) => ({
    id: `term_${pad(i + 1, 4)}`,
    slug: slugify(g.term),
    term: g.definition.nl ? { en: g.term, nl: g.term } : { en: g.term },
    definition: g.definition,
    published: g.published ?? true,
    updated_at: chance(rng, 0.2) ? null : iso(REFERENCE_MS - int(rng, 5, 600) * DAY_MS),
  }));
}

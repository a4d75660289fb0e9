// Static geography for the source-data generator: real Dutch provinces, cities (coordinates, postcode ranges),
// neighbourhoods and street names, plus the locations.ndjson records built from them.
// Coordinates are real city/neighbourhood centres (neighbourhoods without listed coordinates get a deterministic
// offset of a few km from the city centre). Median rents are synthetic but in a realistic range.
import type { LocationRec } from '../build-snapshot/source-schema.ts';
import { hash32, mulberry32, pad, round, slugify, type Tr } from './random.ts';

export interface Province {
  key: string;
  name: Tr;
  lat: number;
  lon: number;
}

export interface NeighbourhoodDef {
  name: string;
  /** Inclusive range of 4-digit postcodes, when known. */
  range?: [number, number];
  lat?: number;
  lon?: number;
  /** Planned area: published=false and never used by listings. */
  planned?: boolean;
}

export interface CityDef {
  name: Tr;
  province: string;
  lat: number;
  lon: number;
  /** Inclusive range of the city's 4-digit postcodes; every generated postcode falls inside it. */
  range: [number, number];
  /** postcode_prefixes of the city record (each covers part of `range`; together they cover all of it). */
  prefixes: string[];
  /** Synthetic median asking rent (EUR/month) of a typical 2-3 room apartment. */
  medianRent: number;
  neighbourhoods: NeighbourhoodDef[];
  streets?: string[];
}

export const PROVINCES: Province[] = [
  {
    key: 'GR',
    name: { en: 'Groningen', nl: 'Groningen', de: 'Groningen', fr: 'Groningue', es: 'Groninga' },
    lat: 53.2159,
    lon: 6.7409,
  },
  {
    key: 'FR',
    name: { en: 'Friesland', nl: 'Friesland', de: 'Friesland', fr: 'Frise', es: 'Frisia' },
    lat: 53.1064,
    lon: 5.8201,
  },
  {
    key: 'DR',
    name: { en: 'Drenthe', nl: 'Drenthe', de: 'Drenthe', fr: 'Drenthe', es: 'Drente' },
    lat: 52.8625,
    lon: 6.6231,
  },
  {
    key: 'OV',
    name: { en: 'Overijssel', nl: 'Overijssel', de: 'Overijssel', fr: 'Overijssel', es: 'Overijssel' },
    lat: 52.4388,
    lon: 6.5016,
  },
  {
    key: 'FL',
    name: { en: 'Flevoland', nl: 'Flevoland', de: 'Flevoland', fr: 'Flevoland', es: 'Flevoland' },
    lat: 52.5279,
    lon: 5.5954,
  },
  {
    key: 'GE',
    name: { en: 'Gelderland', nl: 'Gelderland', de: 'Gelderland', fr: 'Gueldre', es: 'Güeldres' },
    lat: 52.0452,
    lon: 5.8718,
  },
  {
    key: 'UT',
    name: { en: 'Utrecht', nl: 'Utrecht', de: 'Utrecht', fr: 'Utrecht', es: 'Utrecht' },
    lat: 52.0907,
    lon: 5.2213,
  },
  {
    key: 'NH',
    name: {
      en: 'North Holland',
      nl: 'Noord-Holland',
      de: 'Nordholland',
      fr: 'Hollande-Septentrionale',
      es: 'Holanda Septentrional',
    },
    lat: 52.5206,
    lon: 4.7885,
  },
  {
    key: 'ZH',
    name: {
      en: 'South Holland',
      nl: 'Zuid-Holland',
      de: 'Südholland',
      fr: 'Hollande-Méridionale',
      es: 'Holanda Meridional',
    },
    lat: 52.0208,
    lon: 4.4937,
  },
  {
    key: 'ZE',
    name: { en: 'Zeeland', nl: 'Zeeland', de: 'Zeeland', fr: 'Zélande', es: 'Zelanda' },
    lat: 51.494,
    lon: 3.8497,
  },
  {
    key: 'NB',
    name: {
      en: 'North Brabant',
      nl: 'Noord-Brabant',
      de: 'Nordbrabant',
      fr: 'Brabant-Septentrional',
      es: 'Brabante Septentrional',
    },
    lat: 51.4827,
    lon: 5.2322,
  },
  {
    key: 'LI',
    name: { en: 'Limburg', nl: 'Limburg', de: 'Limburg', fr: 'Limbourg', es: 'Limburgo' },
    lat: 51.4427,
    lon: 6.0609,
  },
];

const nb = (...names: string[]): NeighbourhoodDef[] => names.map((name) => ({ name }));

/** Cities in descending population order; listings are spread over them Zipf-like in this order. */
export const CITIES: CityDef[] = [
  {
    name: { en: 'Amsterdam', nl: 'Amsterdam' },
    province: 'NH',
    lat: 52.3676,
    lon: 4.9041,
    range: [1011, 1109],
    prefixes: ['10', '110'],
    medianRent: 2100,
    neighbourhoods: [
      { name: 'Centrum', range: [1011, 1012], lat: 52.3731, lon: 4.8926 },
      { name: 'Jordaan', range: [1015, 1016], lat: 52.3747, lon: 4.8809 },
      { name: 'De Pijp', range: [1072, 1074], lat: 52.3544, lon: 4.8937 },
      { name: 'Oud-West', range: [1053, 1054], lat: 52.366, lon: 4.8696 },
      { name: 'Oud-Zuid', range: [1075, 1077], lat: 52.351, lon: 4.87 },
      { name: 'Oost', range: [1091, 1094], lat: 52.3607, lon: 4.9286 },
      { name: 'Noord', range: [1021, 1035], lat: 52.399, lon: 4.919 },
      { name: 'Nieuw-West', range: [1062, 1069], lat: 52.364, lon: 4.805 },
      { name: 'Zuidoost', range: [1101, 1108], lat: 52.311, lon: 4.972 },
      { name: 'IJburg', range: [1087, 1087], lat: 52.3545, lon: 5.002 },
      { name: 'Haven-Stad', lat: 52.393, lon: 4.865, planned: true },
    ],
    streets: [
      'Prinsengracht',
      'Keizersgracht',
      'Herengracht',
      'Ferdinand Bolstraat',
      'Albert Cuypstraat',
      'Kinkerstraat',
      'Javastraat',
      'Overtoom',
    ],
  },
  {
    name: { en: 'Rotterdam', nl: 'Rotterdam' },
    province: 'ZH',
    lat: 51.9244,
    lon: 4.4777,
    range: [3011, 3089],
    prefixes: ['30'],
    medianRent: 1550,
    neighbourhoods: [
      { name: 'Centrum', range: [3011, 3016], lat: 51.922, lon: 4.479 },
      { name: 'Kralingen', range: [3061, 3063], lat: 51.925, lon: 4.51 },
      { name: 'Delfshaven', range: [3021, 3029], lat: 51.911, lon: 4.447 },
      { name: 'Kop van Zuid', range: [3071, 3072], lat: 51.903, lon: 4.491 },
      { name: 'Noord', range: [3031, 3039], lat: 51.935, lon: 4.475 },
      { name: 'Hillegersberg', range: [3054, 3056], lat: 51.953, lon: 4.488 },
      { name: 'Charlois', range: [3081, 3086], lat: 51.883, lon: 4.475 },
      { name: 'Feyenoord City', lat: 51.894, lon: 4.523, planned: true },
    ],
    streets: ['Witte de Withstraat', 'Nieuwe Binnenweg', 'Coolsingel', 'Oudedijk', 'Zwart Janstraat'],
  },
  {
    name: { en: 'The Hague', nl: 'Den Haag', de: 'Den Haag', fr: 'La Haye', es: 'La Haya' },
    province: 'ZH',
    lat: 52.0705,
    lon: 4.3007,
    range: [2491, 2599],
    prefixes: ['249', '25'],
    medianRent: 1650,
    neighbourhoods: [
      { name: 'Centrum', range: [2511, 2514], lat: 52.0786, lon: 4.3128 },
      { name: 'Scheveningen', range: [2583, 2587], lat: 52.108, lon: 4.276 },
      { name: 'Statenkwartier', range: [2582, 2582], lat: 52.093, lon: 4.287 },
      { name: 'Bezuidenhout', range: [2593, 2595], lat: 52.085, lon: 4.338 },
      { name: 'Benoordenhout', range: [2596, 2597], lat: 52.096, lon: 4.332 },
      { name: 'Escamp', range: [2541, 2548], lat: 52.047, lon: 4.275 },
      { name: 'Ypenburg', range: [2496, 2497], lat: 52.045, lon: 4.37 },
    ],
    streets: ['Laan van Meerdervoort', 'Frederik Hendriklaan', 'Prinsegracht', 'Theresiastraat', 'Gevers Deynootweg'],
  },
  {
    name: { en: 'Utrecht', nl: 'Utrecht' },
    province: 'UT',
    lat: 52.0907,
    lon: 5.1214,
    range: [3511, 3585],
    prefixes: ['35'],
    medianRent: 1750,
    neighbourhoods: [
      { name: 'Binnenstad', range: [3511, 3512], lat: 52.0907, lon: 5.121 },
      { name: 'Lombok', range: [3531, 3531], lat: 52.092, lon: 5.099 },
      { name: 'Wittevrouwen', range: [3572, 3572], lat: 52.098, lon: 5.132 },
      { name: 'Oost', range: [3581, 3584], lat: 52.087, lon: 5.145 },
      { name: 'Leidsche Rijn', range: [3541, 3545], lat: 52.094, lon: 5.045 },
      { name: 'Overvecht', range: [3561, 3564], lat: 52.116, lon: 5.113 },
      { name: 'Lunetten', range: [3524, 3524], lat: 52.063, lon: 5.137 },
      { name: 'Merwedekanaalzone', lat: 52.077, lon: 5.1, planned: true },
    ],
    streets: ['Oudegracht', 'Biltstraat', 'Twijnstraat', 'Amsterdamsestraatweg', 'Kanaalstraat'],
  },
  {
    name: { en: 'Eindhoven', nl: 'Eindhoven' },
    province: 'NB',
    lat: 51.4416,
    lon: 5.4697,
    range: [5611, 5658],
    prefixes: ['561', '562', '563', '564', '565'],
    medianRent: 1450,
    neighbourhoods: [
      { name: 'Centrum', range: [5611, 5611], lat: 51.439, lon: 5.478 },
      { name: 'Strijp', range: [5616, 5617], lat: 51.447, lon: 5.456 },
      { name: 'Woensel', range: [5621, 5629], lat: 51.47, lon: 5.47 },
      { name: 'Stratum', range: [5613, 5615], lat: 51.424, lon: 5.489 },
      { name: 'Gestel', range: [5652, 5658], lat: 51.42, lon: 5.455 },
    ],
    streets: ['Stratumseind', 'Kruisstraat', 'Boschdijk', 'Hoogstraat'],
  },
  {
    name: { en: 'Groningen', nl: 'Groningen', de: 'Groningen', fr: 'Groningue', es: 'Groninga' },
    province: 'GR',
    lat: 53.2194,
    lon: 6.5665,
    range: [9711, 9747],
    prefixes: ['971', '972', '973', '974'],
    medianRent: 1150,
    neighbourhoods: [
      { name: 'Binnenstad', range: [9711, 9712], lat: 53.219, lon: 6.568 },
      { name: 'Helpman', range: [9722, 9723], lat: 53.2, lon: 6.58 },
      { name: 'Oosterpoort', range: [9724, 9724], lat: 53.21, lon: 6.577 },
      { name: 'Paddepoel', range: [9742, 9742], lat: 53.233, lon: 6.547 },
      { name: 'Beijum', lat: 53.245, lon: 6.592 },
    ],
    streets: ['Oude Ebbingestraat', 'Herestraat', 'Zuiderdiep', 'Oosterstraat'],
  },
  {
    name: { en: 'Tilburg', nl: 'Tilburg' },
    province: 'NB',
    lat: 51.5555,
    lon: 5.0913,
    range: [5011, 5049],
    prefixes: ['501', '502', '503', '504'],
    medianRent: 1250,
    neighbourhoods: nb('Centrum', 'Oud-Noord', 'Reeshof', 'Tilburg-Noord'),
  },
  {
    name: { en: 'Almere', nl: 'Almere' },
    province: 'FL',
    lat: 52.3508,
    lon: 5.2647,
    range: [1311, 1364],
    prefixes: ['131', '132', '133', '134', '135', '136'],
    medianRent: 1400,
    neighbourhoods: nb('Almere Stad', 'Almere Buiten', 'Almere Haven', 'Almere Poort'),
  },
  {
    name: { en: 'Breda', nl: 'Breda' },
    province: 'NB',
    lat: 51.5719,
    lon: 4.7683,
    range: [4811, 4839],
    prefixes: ['481', '482', '483'],
    medianRent: 1300,
    neighbourhoods: nb('Centrum', 'Ginneken', 'Princenhage', 'Haagse Beemden'),
  },
  {
    name: { en: 'Nijmegen', nl: 'Nijmegen', de: 'Nimwegen', fr: 'Nimègue', es: 'Nimega' },
    province: 'GE',
    lat: 51.8126,
    lon: 5.8372,
    range: [6511, 6546],
    prefixes: ['651', '652', '653', '654'],
    medianRent: 1300,
    neighbourhoods: nb('Centrum', 'Bottendaal', 'Oost', 'Lent', 'Dukenburg'),
  },
  {
    name: { en: 'Apeldoorn', nl: 'Apeldoorn' },
    province: 'GE',
    lat: 52.2112,
    lon: 5.9699,
    range: [7311, 7339],
    prefixes: ['731', '732', '733'],
    medianRent: 1200,
    neighbourhoods: nb('Centrum', 'Zevenhuizen', 'De Maten', 'Zuidbroek'),
  },
  {
    name: { en: 'Arnhem', nl: 'Arnhem' },
    province: 'GE',
    lat: 51.9851,
    lon: 5.8987,
    range: [6811, 6846],
    prefixes: ['681', '682', '683', '684'],
    medianRent: 1250,
    neighbourhoods: nb('Centrum', 'Sonsbeek', 'Presikhaaf', 'Schuytgraaf'),
  },
  {
    name: { en: 'Haarlem', nl: 'Haarlem' },
    province: 'NH',
    lat: 52.3874,
    lon: 4.6462,
    range: [2011, 2037],
    prefixes: ['201', '202', '203'],
    medianRent: 1700,
    neighbourhoods: nb('Centrum', 'Haarlem-Noord', 'Schalkwijk', 'Kleverpark'),
  },
  {
    name: { en: 'Enschede', nl: 'Enschede' },
    province: 'OV',
    lat: 52.2215,
    lon: 6.8937,
    range: [7511, 7548],
    prefixes: ['751', '752', '753', '754'],
    medianRent: 1050,
    neighbourhoods: nb('Centrum', 'Roombeek', 'Velve-Lindenhof', 'Stroinkslanden'),
  },
  {
    name: { en: 'Amersfoort', nl: 'Amersfoort' },
    province: 'UT',
    lat: 52.1561,
    lon: 5.3878,
    range: [3811, 3829],
    prefixes: ['381', '382'],
    medianRent: 1400,
    neighbourhoods: nb('Binnenstad', 'Vathorst', 'Soesterkwartier', 'Kattenbroek'),
  },
  {
    name: { en: "'s-Hertogenbosch", nl: "'s-Hertogenbosch", de: 'Herzogenbusch', fr: 'Bois-le-Duc', es: 'Bolduque' },
    province: 'NB',
    lat: 51.6978,
    lon: 5.3037,
    range: [5211, 5237],
    prefixes: ['521', '522', '523'],
    medianRent: 1350,
    neighbourhoods: nb('Binnenstad', 'De Muntel', 'Paleiskwartier', 'Rosmalen'),
  },
  {
    name: { en: 'Zwolle', nl: 'Zwolle' },
    province: 'OV',
    lat: 52.5168,
    lon: 6.083,
    range: [8011, 8047],
    prefixes: ['801', '802', '803', '804'],
    medianRent: 1250,
    neighbourhoods: nb('Binnenstad', 'Assendorp', 'Stadshagen', 'Diezerpoort'),
  },
  {
    name: { en: 'Leiden', nl: 'Leiden', de: 'Leiden', fr: 'Leyde', es: 'Leiden' },
    province: 'ZH',
    lat: 52.1601,
    lon: 4.497,
    range: [2311, 2334],
    prefixes: ['231', '232', '233'],
    medianRent: 1550,
    neighbourhoods: nb('Binnenstad', 'Merenwijk', 'Stevenshof', 'Professorenwijk'),
  },
  {
    name: { en: 'Zoetermeer', nl: 'Zoetermeer' },
    province: 'ZH',
    lat: 52.0607,
    lon: 4.494,
    range: [2711, 2729],
    prefixes: ['271', '272'],
    medianRent: 1350,
    neighbourhoods: nb('Centrum', 'Rokkeveen', 'Oosterheem', 'Meerzicht'),
  },
  {
    name: { en: 'Maastricht', nl: 'Maastricht' },
    province: 'LI',
    lat: 50.8514,
    lon: 5.691,
    range: [6211, 6229],
    prefixes: ['621', '622'],
    medianRent: 1250,
    neighbourhoods: nb('Centrum', 'Wyck', 'Jekerkwartier', 'Céramique'),
  },
  {
    name: { en: 'Dordrecht', nl: 'Dordrecht' },
    province: 'ZH',
    lat: 51.8133,
    lon: 4.6901,
    range: [3311, 3329],
    prefixes: ['331', '332'],
    medianRent: 1200,
    neighbourhoods: nb('Binnenstad', 'Stadspolders', 'Sterrenburg', 'Dubbeldam'),
  },
  {
    name: { en: 'Leeuwarden', nl: 'Leeuwarden' },
    province: 'FR',
    lat: 53.2012,
    lon: 5.7999,
    range: [8911, 8939],
    prefixes: ['891', '892', '893'],
    medianRent: 1100,
    neighbourhoods: nb('Binnenstad', 'Huizum', 'Bilgaard', 'Oranjewijk'),
  },
  {
    name: { en: 'Alkmaar', nl: 'Alkmaar' },
    province: 'NH',
    lat: 52.6324,
    lon: 4.7534,
    range: [1811, 1825],
    prefixes: ['181', '182'],
    medianRent: 1300,
    neighbourhoods: nb('Binnenstad', 'Oudorp', 'De Hoef', 'Overdie'),
  },
  {
    name: { en: 'Delft', nl: 'Delft' },
    province: 'ZH',
    lat: 52.0116,
    lon: 4.3571,
    range: [2611, 2629],
    prefixes: ['261', '262'],
    medianRent: 1450,
    neighbourhoods: nb('Binnenstad', 'Tanthof', 'Hof van Delft', 'Wippolder'),
  },
  {
    name: { en: 'Deventer', nl: 'Deventer' },
    province: 'OV',
    lat: 52.2551,
    lon: 6.1639,
    range: [7411, 7429],
    prefixes: ['741', '742'],
    medianRent: 1150,
    neighbourhoods: nb('Binnenstad', 'Colmschate', 'De Vijfhoek', 'Keizerslanden'),
  },
  {
    name: { en: 'Venlo', nl: 'Venlo' },
    province: 'LI',
    lat: 51.3704,
    lon: 6.1724,
    range: [5911, 5928],
    prefixes: ['591', '592'],
    medianRent: 1050,
    neighbourhoods: nb('Centrum', 'Blerick', 'Tegelen', 'Venlo-Oost'),
  },
  {
    name: { en: 'Hilversum', nl: 'Hilversum' },
    province: 'NH',
    lat: 52.2292,
    lon: 5.1669,
    range: [1211, 1223],
    prefixes: ['121', '122'],
    medianRent: 1500,
    neighbourhoods: nb('Centrum', 'Hilversum-Noord', 'Kerkelanden', 'Trompenberg'),
  },
  {
    name: { en: 'Amstelveen', nl: 'Amstelveen' },
    province: 'NH',
    lat: 52.3114,
    lon: 4.8701,
    range: [1181, 1189],
    prefixes: ['118'],
    medianRent: 1900,
    neighbourhoods: nb('Stadshart', 'Westwijk', 'Elsrijk', 'Bovenkerk'),
  },
  {
    name: { en: 'Lelystad', nl: 'Lelystad' },
    province: 'FL',
    lat: 52.5185,
    lon: 5.4714,
    range: [8211, 8245],
    prefixes: ['821', '822', '823', '824'],
    medianRent: 1150,
    neighbourhoods: nb('Centrum', 'Lelystad-Haven', 'Warande', 'Atolwijk'),
  },
  {
    name: { en: 'Assen', nl: 'Assen' },
    province: 'DR',
    lat: 52.9925,
    lon: 6.5649,
    range: [9401, 9409],
    prefixes: ['940'],
    medianRent: 1050,
    neighbourhoods: nb('Centrum', 'Kloosterveen', 'Marsdijk', 'Pittelo'),
  },
  {
    name: { en: 'Middelburg', nl: 'Middelburg', de: 'Middelburg', fr: 'Middelbourg', es: 'Middelburg' },
    province: 'ZE',
    lat: 51.4988,
    lon: 3.6136,
    range: [4331, 4339],
    prefixes: ['433'],
    medianRent: 1100,
    neighbourhoods: nb('Binnenstad', 'Dauwendaele', 'Middelburg-Zuid'),
  },
  {
    name: { en: 'Vlissingen', nl: 'Vlissingen', de: 'Vlissingen', fr: 'Flessingue', es: 'Flesinga' },
    province: 'ZE',
    lat: 51.4426,
    lon: 3.5736,
    range: [4381, 4389],
    prefixes: ['438'],
    medianRent: 1000,
    neighbourhoods: nb('Centrum', 'Oost-Souburg', 'Paauwenburg'),
  },
];

export const GENERIC_STREETS = [
  'Kerkstraat',
  'Dorpsstraat',
  'Stationsweg',
  'Molenstraat',
  'Nieuwstraat',
  'Schoolstraat',
  'Julianastraat',
  'Beatrixstraat',
  'Wilhelminastraat',
  'Oranjestraat',
  'Marktstraat',
  'Hoofdstraat',
  'Parkweg',
  'Lindelaan',
  'Eikenlaan',
  'Beukenlaan',
  'Kastanjelaan',
  'Rembrandtlaan',
  'Vondelstraat',
  'Mozartlaan',
  'Prins Hendrikstraat',
  'Koningsweg',
  'Emmastraat',
  'Willemstraat',
  'Van Goghstraat',
  'Spoorstraat',
  'Havenstraat',
  'Tuinstraat',
  'Thorbeckestraat',
  'Mauritsstraat',
  'Johan de Wittlaan',
  'Merelstraat',
  'Zwaluwstraat',
  'Leeuweriklaan',
  'Sint Annastraat',
  'Grote Markt',
  'Singel',
  'Nassaulaan',
  'Steenstraat',
  'Voorstraat',
];

/** A neighbourhood or city as listings see it: where to put coordinates and which postcodes to draw. */
export interface Place {
  locationId: string;
  city: number; // index into CITIES
  /** Neighbourhood display name, or null for a listing placed directly in the city. */
  area: string | null;
  lat: number;
  lon: number;
  /** Spread of listing coordinates around (lat, lon), in degrees latitude. */
  spread: number;
  range: [number, number];
  streets: string[];
}

export interface Geography {
  records: LocationRec[];
  cityIds: string[];
  /** Per city: the places listings can use (index 0 = the city itself, then its published neighbourhoods). */
  places: Place[][];
}

/** Smallest set of 1-4 digit prefixes covering exactly the 4-digit postcodes lo..hi. */
export function coverPrefixes(lo: number, hi: number): string[] {
  const out: string[] = [];
  let x = lo;
  while (x <= hi) {
    let block = 1000;
    while (block > 1 && (x % block !== 0 || x + block - 1 > hi)) block /= 10;
    out.push(String(x).slice(0, 4 - Math.log10(block)));
    x += block;
  }
  return out;
}

export function buildGeography(): Geography {
  const records: LocationRec[] = [];
  let seq = 0;
  const nextId = () => `loc_${pad(++seq, 4)}`;
  const provinceIds = new Map<string, string>();
  for (const p of PROVINCES) {
    const id = nextId();
    provinceIds.set(p.key, id);
    records.push({
      id,
      slug: `${slugify(p.name.nl!)}-province`,
      type: 'province',
      parent_id: null,
      name: p.name,
      latitude: p.lat,
      longitude: p.lon,
      postcode_prefixes: null,
      published: true,
    });
  }
  const cityIds = CITIES.map((c) => {
    const id = nextId();
    records.push({
      id,
      slug: slugify(c.name.nl ?? c.name.en),
      type: 'city',
      parent_id: provinceIds.get(c.province)!,
      name: c.name,
      latitude: c.lat,
      longitude: c.lon,
      postcode_prefixes: c.prefixes,
      published: true,
    });
    return id;
  });
  const places: Place[][] = CITIES.map((c, ci) => {
    const streets = [...(c.streets ?? []), ...GENERIC_STREETS];
    const list: Place[] = [
      {
        locationId: cityIds[ci]!,
        city: ci,
        area: null,
        lat: c.lat,
        lon: c.lon,
        spread: 0.018,
        range: c.range,
        streets,
      },
    ];
    const citySlug = slugify(c.name.nl ?? c.name.en);
    for (const n of c.neighbourhoods) {
      const id = nextId();
      // Deterministic offset (about 1.5-3 km) for neighbourhoods without listed coordinates.
      const r = mulberry32(hash32(`${citySlug}/${n.name}`));
      const angle = r() * 2 * Math.PI;
      const dist = 0.014 + r() * 0.014;
      const lat = n.lat ?? round(c.lat + dist * Math.sin(angle), 4);
      const lon = n.lon ?? round(c.lon + (dist * Math.cos(angle)) / Math.cos((c.lat * Math.PI) / 180), 4);
      records.push({
        id,
        slug: `${citySlug}-${slugify(n.name)}`,
        type: 'neighbourhood',
        parent_id: cityIds[ci]!,
        name: { en: n.name },
        latitude: lat,
        longitude: lon,
        postcode_prefixes: n.range ? coverPrefixes(n.range[0], n.range[1]) : null,
        published: !n.planned,
      });
      if (!n.planned)
        list.push({
          locationId: id,
          city: ci,
          area: n.name,
          lat,
          lon,
          spread: 0.005,
          range: n.range ?? c.range,
          streets,
        });
    }
    return list;
  });
  return { records, cityIds, places };
}
